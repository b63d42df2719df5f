"""Notifications: email and webhooks queued in the deciding transaction and sent after commit by
a Celery task, and the in-app list of what needs the signed-in person.

Reviewers hear about new proposals, submitters about decisions — never the person who acted.
Email goes through Django's email backend; a Memory may also set ``policy.webhook_url``, which
receives a JSON POST signed with HMAC-SHA256 (header ``X-Steward-Signature: sha256=<hex>``).

Each user chooses how email reaches them (:class:`review.models.NotificationPreference`):
``immediate`` (the default: one mail per event), ``daily`` (the event is queued on the
``digest`` channel and ``review.send_digests`` — daily in the beat schedule — sends one mail
listing everything since the last digest) or ``off``.

Every mail ends with the link to what it is about — the proposal's page; for a digest, the
notifications page — absolute on ``STEWARD_PUBLIC_URL`` (``lib.public_url.absolute``), the
site-relative path when that is unset.

The in-app list (:func:`needs`) is computed at read time from existing records, through
``proposals.selectors.visible_proposals`` (nothing above the reader's scope or clearance):
open proposals assigned to them, proposals they are involved in (submitted, amended, decided,
commented, assigned) that wait for changes or got a comment from someone else, their claims that
went stale (lease expired, or the proposal is no longer pending), and their Memories' alerts.
The only stored state is the preference row's ``seen_at``: items after it are "new".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from lib.errors import Forbidden, ValidationFailed
from lib.public_url import absolute
from lib.wording import one_of
from memory import inventory
from memory.actors import Actor
from memory.models import Memory
from proposals.models import (
    OPEN_STATUSES,
    Proposal,
    ProposalAmendment,
    ProposalComment,
    ProposalStatus,
)
from proposals.selectors import visible_proposals

from .models import (
    Decision,
    EmailMode,
    Notification,
    NotificationPreference,
    ReviewClaim,
    Verdict,
)
from .tasks import send_notification

#: Rows of each kind the in-app list shows (newest first).
ITEMS_PER_KIND = 20
#: Memories whose inventory alerts the list checks (as the dashboard does).
ALERT_MEMORIES = 10
#: Digest rows one ``send_digests`` run handles (the rest wait for the next run).
DIGEST_BATCH = 2000


_muted: ContextVar[bool] = ContextVar("review_notifications_muted", default=False)


@contextmanager
def muted() -> Iterator[None]:
    """Nothing inside stores or sends a notification: ``manage.py evaluate``'s synthetic
    Memories file proposals nobody is to review, and their reviewers must not be mailed."""
    token = _muted.set(True)
    try:
        yield
    finally:
        _muted.reset(token)


def _queue(rows: list[Notification]) -> None:
    """Store the rows now (same transaction as the decision) and hand them to Celery after
    commit. ``robust``: a failing send (or broker) is logged and never turns a committed
    decision into an error for the person who made it; the row keeps the failure. Nothing
    inside :func:`muted`."""

    if _muted.get():
        return

    def send_after_commit(pk: int) -> Callable[[], None]:
        def send_notification_after_commit() -> None:
            send_notification.delay(pk)

        return send_notification_after_commit

    for row in Notification.objects.bulk_create(rows):
        if row.channel != DIGEST:  # digest rows wait for ``review.send_digests``
            transaction.on_commit(send_after_commit(row.pk), robust=True)


#: The channel of a notification that waits for its recipient's daily digest.
DIGEST = "digest"


def _channel(mode: str) -> str:
    return DIGEST if mode == EmailMode.DAILY else "email"


def email_modes(user_pks: Iterable[int]) -> dict[int, str]:
    """Each user's email mode (one query); users without a preference row are absent
    (immediate)."""
    return dict(
        NotificationPreference.objects.filter(user_id__in=list(user_pks)).values_list(
            "user_id", "email"
        )
    )


def _webhook(proposal: Proposal, event: str, body: str) -> list[Notification]:
    url = (proposal.memory.policy or {}).get("webhook_url")
    if not url:
        return []
    return [
        Notification(
            memory=proposal.memory,
            event=event,
            recipient=url,
            channel="webhook",
            subject=f"{event} #{proposal.pk}",
            body=body,
            proposal_id=proposal.pk,
        )
    ]


def proposal_link(proposal: Proposal) -> str:
    """The last line of a mail about ``proposal``: its page, absolute when
    ``STEWARD_PUBLIC_URL`` is set (else the site-relative path)."""
    return f"Open the proposal: {absolute(reverse('review-proposal', args=[proposal.pk]))}"


def decision_made(proposal: Proposal, *, actor: Actor) -> None:
    """Tell the submitter (the key's owner) what was decided; never the decider."""
    owner = proposal.submitted_by_owner
    verdict = proposal.status
    body = f"Proposal #{proposal.pk} ({proposal.kind}) was {verdict} by {actor.label}."
    if verdict == "changes_requested":
        body = (
            f"{actor.label} asked for changes to proposal #{proposal.pk} ({proposal.kind}):\n"
            f"{proposal.status_reason}\nAmend it to send it back for review."
        )
    if proposal.rejection_reason:
        body += f"\nReason: {proposal.rejection_reason}\nComment: {proposal.decision_comment}"
    body += f"\n{proposal_link(proposal)}"
    rows: list[Notification] = []
    if owner is not None and owner.email and owner.pk != actor.user_pk:
        mode = email_modes([owner.pk]).get(owner.pk, EmailMode.IMMEDIATE)
        if mode != EmailMode.OFF:
            rows.append(
                Notification(
                    memory=proposal.memory,
                    event=f"proposal.{verdict}",
                    recipient=owner.email,
                    channel=_channel(mode),
                    subject=f"[Memory Steward] Proposal #{proposal.pk} {verdict}",
                    body=body,
                    proposal_id=proposal.pk,
                )
            )
    rows += _webhook(proposal, f"proposal.{verdict}", body)
    if rows:
        _queue(rows)


def proposal_submitted(proposal: Proposal, *, actor: Actor) -> None:
    """Tell reviewers a proposal is waiting (not the submitter's owner)."""
    users: Any = (
        get_user_model()
        .objects.filter(groups__name="reviewer", is_active=True)
        .exclude(email="")
        .order_by("pk")
    )
    if actor.user_pk is not None:
        users = users.exclude(pk=actor.user_pk)
    body = (
        f"{'An' if proposal.kind[:1] in 'aeiou' else 'A'} {proposal.kind} proposal "
        f"(#{proposal.pk}) is waiting in {proposal.memory.slug}.\n"
        f"Rationale: {proposal.rationale[:500]}\n"
        f"{proposal_link(proposal)}"
    )
    recipients = list(users[:200])
    modes = email_modes([u.pk for u in recipients])
    rows = [
        Notification(
            memory=proposal.memory,
            event="proposal.submitted",
            recipient=u.email,
            channel=_channel(modes.get(u.pk, EmailMode.IMMEDIATE)),
            subject=f"[Memory Steward] New {proposal.kind} proposal #{proposal.pk}",
            body=body,
            proposal_id=proposal.pk,
        )
        for u in recipients
        if modes.get(u.pk, EmailMode.IMMEDIATE) != EmailMode.OFF
    ]
    rows += _webhook(proposal, "proposal.submitted", body)
    if rows:
        _queue(rows)


#: ``@username`` in a comment (Django's username characters; a trailing full stop is prose).
MENTION = re.compile(r"(?<![\w.+-])@([\w.@+-]+)")
#: Most people one comment can notify.
MAX_MENTIONS = 10


def mentioned_usernames(body: str) -> list[str]:
    """The usernames ``body`` names with ``@``, in order, each once."""
    names = [m.group(1).rstrip(".") for m in MENTION.finditer(body)]
    return list(dict.fromkeys(n for n in names if n))[:MAX_MENTIONS]


def _mails(
    proposal: Proposal, users: Iterable[Any], *, event: str, subject: str, body: str
) -> list[Notification]:
    """One mail per user with an address, on the channel their preference says (none when
    off)."""
    recipients = [u for u in users if u.email]
    modes = email_modes([u.pk for u in recipients])
    return [
        Notification(
            memory=proposal.memory,
            event=event,
            recipient=u.email,
            channel=_channel(modes.get(u.pk, EmailMode.IMMEDIATE)),
            subject=subject,
            body=body,
            proposal_id=proposal.pk,
        )
        for u in recipients
        if modes.get(u.pk, EmailMode.IMMEDIATE) != EmailMode.OFF
    ]


def comment_posted(proposal: Proposal, comment: ProposalComment, *, actor: Actor) -> None:
    """Tell each person the comment @mentions (who may see the proposal; never its author)."""
    names = mentioned_usernames(comment.body)
    if not names:
        return
    users = [
        u
        for u in get_user_model().objects.filter(username__in=names, is_active=True)
        if u.pk != actor.user_pk
        and visible_proposals(Actor.for_user(u)).filter(pk=proposal.pk).exists()
    ]
    body = (
        f"{comment.author_label} mentioned you on proposal #{proposal.pk} "
        f"({proposal.kind}, {proposal.memory.slug}):\n{comment.body[:1000]}\n"
        f"{proposal_link(proposal)}#thread-comment-{comment.pk}"
    )
    rows = _mails(
        proposal,
        users,
        event="proposal.mentioned",
        subject=f"[Memory Steward] {comment.author_label} mentioned you on #{proposal.pk}",
        body=body,
    )
    if rows:
        _queue(rows)


def proposal_amended(proposal: Proposal, *, actor: Actor) -> None:
    """Tell the reviewers (not the one who amended it) that the proposal is pending again as a
    new revision: approvals given before are void. The submitter's owner hears too when
    someone else amended it."""
    reviewers = (
        get_user_model().objects.filter(groups__name="reviewer", is_active=True).order_by("pk")
    )
    users = {u.pk: u for u in reviewers[:200]}
    owner = proposal.submitted_by_owner if proposal.submitted_by_owner_id else None
    if owner is not None and not proposal.is_submitter(actor):
        users[owner.pk] = owner
    users.pop(actor.user_pk, None)  # type: ignore[arg-type]
    body = (
        f"{actor.label} amended proposal #{proposal.pk} ({proposal.kind}, "
        f"{proposal.memory.slug}): it is pending again as revision {proposal.revision}, and "
        f"approvals given before are void.\n{proposal_link(proposal)}"
    )
    rows = _mails(
        proposal,
        users.values(),
        event="proposal.amended",
        subject=f"[Memory Steward] Proposal #{proposal.pk} amended (revision {proposal.revision})",
        body=body,
    )
    rows += _webhook(proposal, "proposal.amended", body)
    if rows:
        _queue(rows)


def entries_fell_due(memory: Memory, items: list[dict[str, Any]]) -> None:
    """Tell each owner which of their facts fell due for re-checking (the ``revalidation``
    job, ``memory.maintenance.revalidation``): one mail per owner who is an active user with an
    email (the entry's ``owner`` names them by username; a team name reaches nobody here),
    listing their entries with links. The job runs as the system: nobody "acted"."""
    by_owner: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_owner.setdefault(item["owner"], []).append(item)
    users = list(
        get_user_model()
        .objects.filter(username__in=list(by_owner), is_active=True)
        .exclude(email="")
        .order_by("pk")
    )
    modes = email_modes([u.pk for u in users])
    rows: list[Notification] = []
    for user in users:
        mode = modes.get(user.pk, EmailMode.IMMEDIATE)
        if mode == EmailMode.OFF:
            continue
        mine = by_owner[user.get_username()]
        lines = [
            f"- {i['entry_id']} (due since {i['review_at'][:10]}): "
            + absolute(reverse("audit-entry-timeline", args=[memory.slug, i["entry_id"]]))
            for i in mine
        ]
        rows.append(
            Notification(
                memory=memory,
                event="entry.review_due",
                recipient=user.email,
                channel=_channel(mode),
                subject=(
                    f"[Memory Steward] {len(mine)} of your facts in {memory.slug} need re-checking"
                ),
                body=(
                    f"These facts you own in {memory.slug} passed their review date. Re-check "
                    "each one, then confirm it (or correct it); nothing is retired by itself.\n"
                    + "\n".join(lines)
                ),
            )
        )
    if rows:
        with transaction.atomic():
            _queue(rows)


# --- Preferences ---------------------------------------------------------------------------------


def _user_pk(actor: Actor) -> int:
    if actor.user_pk is None:
        raise Forbidden("Notification settings belong to a signed-in user.")
    return actor.user_pk


def preference_of(actor: Actor) -> NotificationPreference:
    """The person's preference row, unsaved defaults when there is none (no write on reads)."""
    found = NotificationPreference.objects.filter(user_id=_user_pk(actor)).first()
    return found or NotificationPreference(user_id=_user_pk(actor))


@transaction.atomic(durable=True)
def set_email_mode(actor: Actor, *, mode: str) -> NotificationPreference:
    """Choose how review emails reach the person behind ``actor`` (a user, or a key's owner):
    ``immediate``, ``daily`` or ``off`` (else ``ValidationFailed``, 400). Rows already queued
    keep the channel they were queued on. Locks: the preference row."""
    if mode not in EmailMode.values:
        raise ValidationFailed(details={"email": [one_of(EmailMode.values)]})
    row, _ = NotificationPreference.objects.select_for_update().get_or_create(
        user_id=_user_pk(actor)
    )
    row.email = mode
    row.updated_at = timezone.now()
    row.save(update_fields=["email", "updated_at"])
    return row


@transaction.atomic(durable=True)
def mark_notifications_seen(actor: Actor, *, at: datetime | None = None) -> NotificationPreference:
    """Mark everything in the in-app list up to ``at`` (now) as seen; the marker never moves
    backwards, so a late request from an old tab cannot bring back items already seen."""
    at = at or timezone.now()
    row, _ = NotificationPreference.objects.select_for_update().get_or_create(
        user_id=_user_pk(actor)
    )
    if row.seen_at is None or at > row.seen_at:
        row.seen_at = at
        row.updated_at = timezone.now()
        row.save(update_fields=["seen_at", "updated_at"])
    return row


# --- The in-app list -----------------------------------------------------------------------------


@dataclass
class Item:
    """One line of the list: what happened, when, where to go."""

    kind: str  # assigned · changes_requested · comment · mention · amended · stale_claim · alert
    at: datetime | None
    title: str
    text: str
    url: str
    memory: str
    new: bool = False


@dataclass
class Needs:
    items: list[Item] = field(default_factory=list)
    alerts: list[Item] = field(default_factory=list)
    seen_at: datetime | None = None

    @property
    def new_count(self) -> int:
        return sum(1 for i in self.items if i.new)


def _involved(actor: Actor) -> Q:
    """Proposals ``actor``'s person is involved in: submitted (the key's owner), amended,
    decided, commented or assigned — by the user or by a key they own."""
    person = f"user:{actor.user_pk}"
    ids = {actor.id, person}
    by_person = Q(author_id__in=ids) | Q(on_behalf_of=person)
    return (
        Q(submitted_by_owner_id=actor.user_pk)
        | Q(submitted_by__in=ids)
        | Q(assigned_to_id=actor.user_pk)
        | Q(pk__in=ProposalComment.objects.filter(by_person).values("proposal_id"))
        | Q(pk__in=ProposalAmendment.objects.filter(author_id__in=ids).values("proposal_id"))
        | Q(
            pk__in=Decision.objects.filter(Q(actor_id__in=ids) | Q(on_behalf_of=person)).values(
                "proposal_id"
            )
        )
    )


def _proposal_item(
    kind: str, at: datetime | None, p: Proposal, text: str, memory: str, anchor: str = ""
) -> Item:
    """An item about proposal ``p`` (of Memory ``memory``), linking to its page (at ``anchor``)."""
    return Item(
        kind,
        at,
        f"Proposal #{p.pk} · {p.kind}",
        text,
        reverse("review-proposal", args=[p.pk]) + anchor,
        memory,
    )


def _by_others(qs: QuerySet[Any], author: str, at: str, mine: set[str], person: str) -> Any:
    """The newest rows of ``qs`` that neither the person (``mine``: their user and key ids, in
    ``author``) nor a key on their behalf wrote, with their proposal and Memory."""
    return (
        qs.exclude(**{f"{author}__in": mine})
        .exclude(on_behalf_of=person)
        .select_related("proposal", "memory")
        .order_by(f"-{at}", "-pk")[:ITEMS_PER_KIND]
    )


def _assigned_items(actor: Actor, visible: QuerySet[Proposal]) -> list[Item]:
    """The open proposals assigned to the person, newest assignment first."""
    items = []
    for p in (
        visible.filter(assigned_to_id=actor.user_pk, status__in=OPEN_STATUSES)
        .select_related("memory")
        .order_by("-assigned_at", "-pk")[:ITEMS_PER_KIND]
    ):
        by = f" by {p.assigned_by_label}" if p.assigned_by_label else ""
        text = f"Assigned to you{by}; it is {p.status.replace('_', ' ')}."
        items.append(_proposal_item("assigned", p.assigned_at, p, text, p.memory.slug))
    return items


def _involved_items(
    actor: Actor, visible: QuerySet[Proposal], person: str, mentioned: set[int]
) -> list[Item]:
    """On proposals the person is involved in: the requests for changes they wait on, the
    comments (but those that mention them: ``mentioned``) and the amendments, each by someone
    else."""
    mine = {actor.id, person}
    items = []
    involved = visible.filter(_involved(actor))
    asked = Decision.objects.filter(
        verdict=Verdict.REQUEST_CHANGES,
        proposal__in=involved.filter(status=ProposalStatus.CHANGES_REQUESTED).values("pk"),
        proposal_revision=F("proposal__revision"),
    )
    for d in _by_others(asked, "actor_id", "decided_at", mine, person):
        text = f"{d.actor_label} asked for changes: {d.comment[:300]}"
        items.append(
            _proposal_item("changes_requested", d.decided_at, d.proposal, text, d.memory.slug)
        )

    comments = ProposalComment.objects.filter(proposal__in=involved.values("pk"))
    if mentioned:
        comments = comments.exclude(pk__in=mentioned)  # listed as mentions instead
    for c in _by_others(comments, "author_id", "created_at", mine, person):
        text = f"{c.author_label} commented: {c.body[:300]}"
        anchor = f"#thread-comment-{c.pk}"
        items.append(
            _proposal_item("comment", c.created_at, c.proposal, text, c.memory.slug, anchor)
        )

    amendments = ProposalAmendment.objects.filter(proposal__in=involved.values("pk"))
    for a in _by_others(amendments, "author_id", "created_at", mine, person):
        note = f": {a.comment[:300]}" if a.comment else "."
        text = (
            f"{a.author_label} amended it (revision {a.number}); approvals given before are "
            f"void{note}"
        )
        items.append(_proposal_item("amended", a.created_at, a.proposal, text, a.memory.slug))
    return items


def _mention_items(actor: Actor, visible: QuerySet[Proposal], person: str) -> list[Item]:
    """Comments by others that name the person with ``@username``, on proposals they may see
    (the database narrows by the text, the mention pattern decides)."""
    if actor.user_pk is None:
        return []
    username = (
        get_user_model().objects.filter(pk=actor.user_pk).values_list("username", flat=True).first()
    )
    if not username:
        return []
    candidates = ProposalComment.objects.filter(
        proposal__in=visible.values("pk"), body__icontains=f"@{username}"
    )
    items = []
    for c in _by_others(candidates, "author_id", "created_at", {actor.id, person}, person):
        if username not in mentioned_usernames(c.body):
            continue
        text = f"{c.author_label} mentioned you: {c.body[:300]}"
        anchor = f"#thread-comment-{c.pk}"
        items.append(
            _proposal_item("mention", c.created_at, c.proposal, text, c.memory.slug, anchor)
        )
    return items


def _stale_claim_items(actor: Actor, visible: QuerySet[Proposal], now: datetime) -> list[Item]:
    """The actor's claims that went stale: the lease expired, or the proposal is no longer
    pending."""
    items = []
    for claim in (
        ReviewClaim.objects.filter(actor_id=actor.id, proposal__in=visible.values("pk"))
        .filter(Q(expires_at__lte=now) | ~Q(proposal__status=ProposalStatus.PENDING))
        # Never a notice about one's own decision (a claim ends with it; older rows may not).
        .exclude(proposal__decided_by=actor.id)
        .select_related("proposal__memory")
    ):
        p = claim.proposal
        if p.status == ProposalStatus.PENDING:
            at, text = claim.expires_at, "Your claim expired; claim it again or let it go."
        else:
            at = p.status_changed_at
            text = f"You claimed it, and it is now {p.status.replace('_', ' ')}."
        items.append(_proposal_item("stale_claim", at, p, text, p.memory.slug))
    return items


def _alert_items(actor: Actor) -> list[Item]:
    """The inventory alerts of the first :data:`ALERT_MEMORIES` Memories the actor sees."""
    alerts = []
    for m in Memory.objects.visible_to(actor).order_by("slug")[:ALERT_MEMORIES]:
        for a in inventory.alerts(m):
            alerts.append(
                Item(
                    "alert",
                    None,
                    f"{m.name} ({m.slug})",
                    f"{a.get('code', '')}: {a.get('message', '')}",
                    reverse("memory-home", args=[m.slug]),
                    m.slug,
                )
            )
    return alerts


def needs(actor: Actor, *, with_alerts: bool = True) -> Needs:
    """What needs the signed-in person (a browser user), newest first. A fixed number of
    queries: one per kind of item, plus the alerts of at most :data:`ALERT_MEMORIES`
    Memories when ``with_alerts`` (the nav badge leaves them out: they carry no time, so they
    are never "new")."""
    if actor.user_pk is None:
        return Needs()
    pref = NotificationPreference.objects.filter(user_id=actor.user_pk).first()
    seen_at = pref.seen_at if pref else None
    visible = visible_proposals(actor)
    now = timezone.now()
    person = f"user:{actor.user_pk}"
    mentions = _mention_items(actor, visible, person)
    mentioned = {int(i.url.rsplit("-", 1)[1]) for i in mentions}
    items = [
        *_assigned_items(actor, visible),
        *mentions,
        *_involved_items(actor, visible, person, mentioned),
        *_stale_claim_items(actor, visible, now),
    ]
    for item in items:
        item.new = item.at is not None and (seen_at is None or item.at > seen_at)
    items.sort(key=lambda i: i.at or now, reverse=True)
    alerts = _alert_items(actor) if with_alerts else []
    return Needs(items=items, alerts=alerts, seen_at=seen_at)


# --- Daily digest --------------------------------------------------------------------------------


def digest_body(rows: list[Notification]) -> str:
    """The digest: each row's mail (with its own link and its proposal's status now), then the
    notifications page."""
    lines = [f"{len(rows)} review notification(s) since your last digest:", ""]
    # Each proposal's status now (one query): a notice from the morning about a proposal decided
    # in the afternoon says so, instead of reading as if it still waited.
    ids = {r.proposal_id for r in rows if r.proposal_id is not None}
    status = dict(Proposal.objects.filter(pk__in=ids).values_list("pk", "status") if ids else [])
    for row in rows:
        now = status.get(row.proposal_id) if row.proposal_id is not None else None
        label = ProposalStatus(now).label.lower() if now in ProposalStatus.values else now
        tail = f" — now {label}" if now else ""
        lines.append(f"* {row.subject} ({row.created_at:%Y-%m-%d %H:%M} UTC){tail}")
        lines.extend("  " + line for line in row.body.splitlines())
        lines.append("")
    lines.append(f"What needs you now: {absolute(reverse('review-notifications'))}")
    return "\n".join(lines)


def queue_digests(*, now: datetime | None = None) -> int:
    """Fold every waiting ``digest`` row into one email per recipient and queue those emails
    (sent after commit by ``review.send_notification``). Idempotent: each row is claimed with
    a compare-and-set on ``sent_at``, so two runs never put it into two digests. Returns how
    many digest emails were queued."""
    now = now or timezone.now()
    waiting = list(
        Notification.objects.filter(channel=DIGEST, sent_at__isnull=True).order_by("id")[
            :DIGEST_BATCH
        ]
    )
    by_recipient: dict[str, list[Notification]] = {}
    for row in waiting:
        by_recipient.setdefault(row.recipient, []).append(row)
    queued = 0
    for recipient, rows in by_recipient.items():
        with transaction.atomic():
            claimed = [
                r
                for r in rows
                if Notification.objects.filter(pk=r.pk, sent_at__isnull=True).update(sent_at=now)
            ]
            if not claimed:
                continue
            _queue(
                [
                    Notification(
                        memory_id=claimed[0].memory_id,
                        event="digest",
                        recipient=recipient,
                        subject=f"[Memory Steward] Daily digest: {len(claimed)} notification(s)",
                        body=digest_body(claimed),
                    )
                ]
            )
            queued += 1
    return queued


@shared_task(name="review.send_digests")
def send_digests() -> int:
    """The daily digest (beat: ``send-review-digests``): one email per recipient who chose
    ``daily``, listing what was queued for them since the last digest. Idempotent (each queued
    row goes into exactly one digest); returns how many digests were queued."""
    return queue_digests()
