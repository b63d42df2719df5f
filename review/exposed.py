"""What an operation retired or replaced, and the runs that had been served it (the exposure
ledger, ``exposure``): ``exposed_runs`` in the operation's JSON and page, and the
``operation.exposed`` webhook.

A version is *retired or replaced* by an approval when its entry leaves current recall
(superseded, consolidated away, cleaned up, quarantined, promoted) or gets a new version
(a consolidation's target) — the operation's ``derived_view_impact``; by a compensation when a
version the approval produced stops being the entry's current one. The runs listed are those
the ledger says were served that exact version, up to the moment of the operation (or
compensation): since the version was written, since the ledger only ever holds rows of versions
that existed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from celery import shared_task
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from exposure import ledger
from exposure.selectors import exposed_runs
from lib.errors import ValidationFailed
from memory.models import HeadState, Memory, Revision, RevisionChange, RevisionKind

from .models import MaintenanceOperation, Notification
from .tasks import send_notification

#: The webhook event.
EVENT = "operation.exposed"


def _replacement_of(op: MaintenanceOperation) -> dict[str, str]:
    """For each entry id the approval retired, the entry that replaces it (relations)."""
    out: dict[str, str] = {}
    for rel in (op.produced or {}).get("relations") or []:
        kind, src, dst = rel.get("kind"), rel.get("from_entry"), rel.get("to_entry")
        if kind in ("supersedes", "promoted_from"):
            out[str(dst)] = str(src)
        elif kind == "consolidated_into":
            out[str(src)] = str(dst)
    return out


def retired_versions(op: MaintenanceOperation) -> list[dict[str, Any]]:
    """``[{entry_id, old_version, new: {entry_id, version} | None}]`` the approval retired or
    replaced."""
    impact = op.derived_view_impact or {}
    gone = set(impact.get("leaves_current_recall") or []) | set(
        impact.get("new_version_in_recall") or []
    )
    heads: dict[str, dict[str, Any]] = (op.produced or {}).get("heads") or {}
    before = {str(p.get("entry_id")): p for p in op.pre_state or []}
    replacement = _replacement_of(op)
    out = []
    for uid, pre in before.items():
        if uid not in gone:
            continue
        new: dict[str, Any] | None = None
        after = heads.get(uid)
        if after and after.get("version") != pre.get("version"):
            new = {"entry_id": uid, "version": after.get("version")}
        elif uid in replacement:
            succ = replacement[uid]
            version = (heads.get(succ) or before.get(succ) or {}).get("version")
            new = {"entry_id": succ, "version": version}
        out.append({"entry_id": uid, "old_version": pre.get("version"), "new": new})
    return sorted(out, key=lambda v: v["entry_id"])


def compensated_versions(op: MaintenanceOperation) -> list[dict[str, Any]]:
    """The versions the approval made current that its compensation took back, each with the
    version the compensation restored (None when the entry is retired)."""
    heads: dict[str, dict[str, Any]] = (op.produced or {}).get("heads") or {}
    restore = {str(i.get("entry_id")): i for i in (op.compensation_plan or {}).get("heads") or []}
    out = []
    for uid, after in heads.items():
        if after.get("state") != "active":
            continue
        back = restore.get(uid)
        if back is not None and (back.get("version"), back.get("state")) == (
            after.get("version"),
            after.get("state"),
        ):
            continue  # compensation leaves it as the approval did
        new = (
            {"entry_id": uid, "version": back.get("version")}
            if back is not None and back.get("state") == "active"
            else None
        )
        out.append({"entry_id": uid, "old_version": after.get("version"), "new": new})
    return sorted(out, key=lambda v: v["entry_id"])


def _runs(op: MaintenanceOperation, versions: list[dict[str, Any]], until: Any) -> dict[str, Any]:
    runs, omitted = exposed_runs(
        op.memory_id, [(v["entry_id"], int(v["old_version"])) for v in versions], until=until
    )
    return {"exposed_runs": runs, "exposed_runs_omitted": omitted}


def operation_exposure(op: MaintenanceOperation) -> dict[str, Any]:
    """``{retired_versions, exposed_runs, exposed_runs_omitted}`` of the approval, and the same
    under ``compensation`` when it was compensated. One query each."""
    versions = retired_versions(op)
    out: dict[str, Any] = {"retired_versions": versions, **_runs(op, versions, op.created_at)}
    comp = getattr(op, "compensation", None)
    if comp is not None:
        undone = compensated_versions(op)
        out["compensation"] = {"retired_versions": undone, **_runs(op, undone, comp.created_at)}
    return out


def notify_after_commit(
    op: MaintenanceOperation, *, memory: Memory, compensated: bool = False
) -> None:
    """After the deciding (or compensating) transaction commits, send the ``operation.exposed``
    webhook when the Memory has a ``webhook_url`` and some run was served a version the
    operation retired. Never fails the committed operation."""
    if not (memory.policy or {}).get("webhook_url"):
        return

    def send() -> None:
        send_exposure_notice.delay(op.pk, compensated)

    transaction.on_commit(send, robust=True)


def exposure_payload(op: MaintenanceOperation, *, compensated: bool) -> dict[str, Any]:
    exposure = operation_exposure(op)
    part = exposure.get("compensation", {}) if compensated else exposure
    return {
        "event": EVENT,
        "memory": op.memory.slug,
        "operation": op.pk,
        "proposal": op.proposal_id,
        "kind": "compensation" if compensated else op.kind,
        "versions": part.get("retired_versions", []),
        "exposed_runs": part.get("exposed_runs", []),
        "exposed_runs_omitted": part.get("exposed_runs_omitted", 0),
    }


def queue_exposure_notice(operation_pk: int, *, compensated: bool = False) -> Notification | None:
    """Store and send the webhook for operation ``operation_pk`` (the ledger's waiting rows
    written first, in the embedded mode). None when no run was served a retired version."""
    ledger.flush()
    op = (
        MaintenanceOperation.objects.select_related("memory", "compensation")
        .filter(pk=operation_pk)
        .first()
    )
    url = (op.memory.policy or {}).get("webhook_url") if op else None
    if op is None or not url:
        return None
    payload = exposure_payload(op, compensated=compensated)
    if not payload["exposed_runs"]:
        return None
    row = Notification.objects.create(
        memory=op.memory,
        event=EVENT,
        recipient=url,
        channel="webhook",
        subject=f"{EVENT} #{op.pk}",
        body=json.dumps(payload, sort_keys=True, default=str),
        created_at=timezone.now(),
    )
    send_notification.delay(row.pk)
    return row


def revision_retired(
    memory: Memory, *, revision: int, kind: str, versions: Sequence[tuple[str, int]], at: datetime
) -> None:
    """``memory.effects.retired`` listener: a direct forget or quarantine (a revision, not an
    operation) took these versions out of recall; when the Memory has a ``webhook_url``, send
    ``operation.exposed`` with ``operation: null`` and the revision instead."""
    if not (memory.policy or {}).get("webhook_url"):
        return
    send_revision_exposure_notice.delay(
        memory.pk, revision, kind, [[u, int(v)] for u, v in versions], at.isoformat()
    )


def queue_revision_notice(
    memory_pk: int, revision: int, kind: str, versions: list[list[Any]], at: datetime
) -> Notification | None:
    """Store and send the webhook of a direct forget or quarantine (see
    :func:`revision_retired`); None when no run was served a retired version."""
    ledger.flush()
    memory = Memory.objects.filter(pk=memory_pk).first()
    url = (memory.policy or {}).get("webhook_url") if memory else None
    if memory is None or not url:
        return None
    pairs = [(str(u), int(v)) for u, v in versions]
    runs, omitted = exposed_runs(memory_pk, pairs, until=at)
    if not runs:
        return None
    payload = {
        "event": EVENT,
        "memory": memory.slug,
        "operation": None,
        "revision": revision,
        "proposal": None,
        "kind": kind,
        "versions": [{"entry_id": u, "old_version": v, "new": None} for u, v in pairs],
        "exposed_runs": runs,
        "exposed_runs_omitted": omitted,
    }
    row = Notification.objects.create(
        memory=memory,
        event=EVENT,
        recipient=url,
        channel="webhook",
        subject=f"{EVENT} revision {revision}",
        body=json.dumps(payload, sort_keys=True, default=str),
        created_at=timezone.now(),
    )
    send_notification.delay(row.pk)
    return row


# --- What an agent polls instead of a push: the retirements its own runs were served ----------

#: Revisions that retire a version without an operation (a direct or automatic forget, a
#: reviewer's direct quarantine); every revision with an operation (an approval, a
#: compensation) is read through its operation.
DIRECT_RETIRING = (RevisionKind.FORGET, RevisionKind.QUARANTINE)
#: Revisions looked at per call by default, and at most.
FEED_LIMIT = 20
FEED_MAX = 100


def retired_for(
    memory: Memory,
    *,
    key: str,
    since_revision: int = 0,
    run_id: str | None = None,
    limit: int = FEED_LIMIT,
) -> dict[str, Any]:
    """The retirements ``key``'s runs had been served — the MCP ``retired_since`` tool, what an
    agent polls since the MCP transport cannot push (docs/exposure.md, "MCP").

    Looks at the Memory's next ``limit`` revisions after ``since_revision`` that retired or
    replaced a version — approvals and compensations (through their operation, exactly as
    ``exposed_runs`` on the operation), direct and automatic forgets, direct quarantines — and
    lists each whose retired versions the ledger says ``key`` (and ``run_id``, when given) was
    served before it: ``{items: [{revision, operation, proposal, kind, reason, at, versions,
    exposed_runs}], cursor, more}``. ``versions`` names only the retired versions that key was
    served (never another entry of the operation). ``cursor`` is the revision to pass as
    ``since_revision`` next; ``more`` says whether revisions are left to look at. Queries: four,
    plus one per listed-candidate revision (at most ``limit``)."""
    head = Memory.objects.filter(pk=memory.pk).values_list("head", flat=True).get()
    if since_revision > head:
        raise ValidationFailed(
            details={"since_revision": [f"Greater than the Memory's head ({head})."]}
        )
    ledger.flush()  # the embedded mode's waiting rows, as for the webhook
    revisions = list(
        Revision.objects.filter(memory=memory, number__gt=since_revision, number__lte=head)
        .filter(Q(operation_id__isnull=False) | Q(kind__in=DIRECT_RETIRING))
        .only("number", "kind", "reason", "recorded_at", "operation_id", "proposal_id")
        .order_by("number")[: limit + 1]
    )
    more = len(revisions) > limit
    revisions = revisions[:limit]
    operations = {
        op.pk: op
        for op in MaintenanceOperation.objects.filter(
            pk__in={r.operation_id for r in revisions if r.operation_id is not None}
        ).select_related("compensation")
    }
    direct = [r.pk for r in revisions if r.operation_id is None]
    gone: dict[int, list[dict[str, Any]]] = {}
    for change in (
        RevisionChange.objects.filter(
            revision_id__in=direct,
            from_state=HeadState.ACTIVE,
            to_state__in=(HeadState.INACTIVE, HeadState.QUARANTINED),
        )
        .select_related("entry", "from_version")
        .order_by("id")
    ):
        gone.setdefault(change.revision_id, []).append(
            {
                "entry_id": change.entry.uid,
                "old_version": change.from_version.number if change.from_version else None,
                "new": None,
            }
        )
    items = []
    for rev in revisions:
        op = operations.get(rev.operation_id) if rev.operation_id is not None else None
        if op is not None:
            compensated = rev.kind == RevisionKind.COMPENSATE
            versions = compensated_versions(op) if compensated else retired_versions(op)
            kind = "compensation" if compensated else op.kind
        else:
            versions, kind = gone.get(rev.pk, []), rev.kind
        versions = [v for v in versions if v.get("old_version") is not None]
        if not versions:
            continue
        runs, omitted = exposed_runs(
            memory.pk,
            [(v["entry_id"], int(v["old_version"])) for v in versions],
            until=rev.recorded_at,
            key=key,
            run_id=run_id,
        )
        if not runs:
            continue
        served = {(v["entry_id"], v["version"]) for run in runs for v in run["versions"]}
        items.append(
            {
                "revision": rev.number,
                "operation": op.pk if op is not None else None,
                "proposal": op.proposal_id if op is not None else None,
                "kind": kind,
                "reason": rev.reason,
                "at": rev.recorded_at,
                "versions": [v for v in versions if (v["entry_id"], v["old_version"]) in served],
                "exposed_runs": runs,
                "exposed_runs_omitted": omitted,
            }
        )
    cursor = revisions[-1].number if more else head
    return {"items": items, "cursor": cursor, "more": more}


@shared_task(name="review.send_exposure_notice")
def send_exposure_notice(operation_pk: int, compensated: bool = False) -> str:
    """Queue the ``operation.exposed`` webhook of an operation (or its compensation): the runs
    the exposure ledger says were served a version it retired. Idempotent per send: nothing is
    stored when no run was served one."""
    row = queue_exposure_notice(operation_pk, compensated=compensated)
    return "queued" if row is not None else "nothing to send"


@shared_task(name="review.send_revision_exposure_notice")
def send_revision_exposure_notice(
    memory_pk: int, revision: int, kind: str, versions: list[list[object]], at: str
) -> str:
    """Queue the ``operation.exposed`` webhook of a direct forget or quarantine (revision
    ``revision``): the runs served the version it retired, up to ``at``."""
    when = parse_datetime(at) or timezone.now()
    row = queue_revision_notice(memory_pk, revision, kind, versions, when)
    return "queued" if row is not None else "nothing to send"
