"""The dashboard's recent decisions read as past events: "Approved by rita", "Changes requested
by rita", "Rejected by rita · Reason: …", each verdict keeping its badge colour."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User

from memory.actors import Actor
from review import actions
from tests.review_ui.conftest import consolidate

pytestmark = pytest.mark.django_db


def as_rita() -> Actor:
    """rita deciding in the web UI, as the dashboard names her."""
    return Actor.for_user(User.objects.get(username="rita"))


def decision_lines(html: str) -> list[str]:
    """The text of each recent-decision row, tags removed and whitespace collapsed."""
    section = html[html.index('id="dash-decisions"') :].split("</section>")[0]
    rows = re.findall(r"<li>(.*?)</li>", section, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in rows]


def test_each_verdict_reads_as_a_past_event_by_its_reviewer(rita, memory, agent):
    approved = consolidate(memory, agent.actor, rationale="One")
    actions.approve_proposal(approved.pk, actor=as_rita())
    changed = consolidate(memory, agent.actor, rationale="Two")
    actions.request_changes(changed.pk, actor=as_rita(), comment="Name the script.")
    rejected = consolidate(memory, agent.actor, rationale="Three")
    actions.reject_proposal(
        rejected.pk, actor=as_rita(), reason="insufficient_evidence", comment="Cite it."
    )
    lines = decision_lines(rita.get("/").content.decode())
    assert len(lines) == 3
    rejected_line, changed_line, approved_line = lines
    assert approved_line.startswith(f"#{approved.pk} consolidation Approved by rita in ")
    assert changed_line.startswith(f"#{changed.pk} consolidation Changes requested by rita in ")
    assert rejected_line.startswith(
        f"#{rejected.pk} consolidation Rejected by rita · Reason: Insufficient evidence in "
    )
    for line in lines:
        assert "Approve " not in line and "Reject " not in line and "Request Changes" not in line


def test_the_verdict_badges_keep_their_colours(rita, memory, agent):
    approved = consolidate(memory, agent.actor, rationale="One")
    actions.approve_proposal(approved.pk, actor=as_rita())
    rejected = consolidate(memory, agent.actor, rationale="Two")
    actions.reject_proposal(rejected.pk, actor=as_rita(), reason="wrong", comment="No.")
    html = rita.get("/").content.decode()
    assert '<span class="badge ok">Approved</span>' in html
    assert '<span class="badge lost">Rejected</span>' in html
