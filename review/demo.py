"""Demo discussion: a thread and a proposal waiting for changes, so a new reviewer sees the
review workflow (comments, request changes → amend) in the demo Memory; the first proposal is
assigned to ravi, who takes his email as a daily digest (so both email modes show in the outbox).

:func:`load_demo_discussion` runs after the demo proposals (``proposals.demo``): the agent
explains its first consolidation in a comment, and files a supersession that rita (a demo
reviewer) sends back with a request for changes. Idempotent: the supersession is filed with an
``Idempotency-Key``; once it exists nothing is written.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from memory import actions as memory_actions
from memory.actors import Actor
from memory.models import Memory
from proposals.actions import add_comment, assign_proposal, resolve_comment
from proposals.models import IdempotencyKey, Proposal
from proposals.requests import submit_request

from .actions import request_changes
from .models import EmailMode
from .notifications import set_email_mode

KEY = "demo:{slug}:changes-requested"


def load_demo_discussion(memory: Memory, *, agent_actor: Actor, first: Proposal) -> int:
    """The thread on ``first`` and one proposal in ``changes_requested``; returns how many
    proposals it filed (0 when they exist already)."""
    key = KEY.format(slug=memory.slug)
    if IdempotencyKey.objects.filter(submitted_by=agent_actor.id, key=key).exists():
        return 0
    rita = Actor.for_user(get_user_model().objects.get(username="rita"))
    ravi = Actor.for_user(get_user_model().objects.get(username="ravi"))
    set_email_mode(ravi, mode=EmailMode.DAILY)
    assign_proposal(first, actor=rita, reviewer="ravi")
    add_comment(
        first,
        actor=agent_actor,
        body="ADR-0007 and scheduler/leader.py say the same thing; the merged text keeps "
        "pg_try_advisory_lock from the second one.",
    )
    question = add_comment(
        first, actor=rita, body="Looks right. Is the ADR still the current decision?"
    )
    add_comment(
        first,
        actor=agent_actor,
        body="Yes: ADR-0007 is accepted and nothing supersedes it.",
    )
    resolve_comment(first, actor=rita, comment_id=question.pk)  # settled, as in a code review
    rotation = memory_actions.add_entry(
        memory,
        actor=agent_actor,
        body="The on-call rotation hands over every Monday at 09:00 CET.",
        kind="fact",
        current_state=True,
        evidence=[{"source": "chat", "ref": "msg-22140"}],
        dedupe=False,
    )
    proposal = submit_request(
        actor=agent_actor,
        data={
            "memory": memory.slug,
            "kind": "supersession",
            "rationale": "The team moved the on-call hand-over to Tuesdays.",
            "old": {"entry_id": rotation.entry.uid, "version": rotation.version.number},
            "successor": {
                "body": "The on-call rotation hands over every Tuesday.",
                "kind": "fact",
                "evidence": [{"source": "chat", "ref": "msg-22305"}],
            },
        },
        idempotency_key=key,
    ).proposal
    request_changes(
        proposal.pk,
        actor=rita,
        comment="Does the hand-over stay at 09:00 CET? Please keep the time in the new text.",
    )
    return 1
