"""The proposal page's panes read cleanly: the result pane names its entry once (its id and the
version the approval makes, beside the link), and a pane whose entry cites no evidence says so
in one line instead of an open, empty "Evidence (0)" panel."""

from __future__ import annotations

import re

import pytest

from proposals.requests import submit_request
from tests.review_ui.conftest import add, consolidate

pytestmark = pytest.mark.django_db


def page_of(client, pk: int) -> str:
    r = client.get(f"/review/proposals/{pk}/")
    assert r.status_code == 200, r.content
    return r.content.decode()


def panes(html: str) -> list[str]:
    """Each pane's HTML, inputs first, then the result."""
    return re.findall(r'<article class="pane[ "].*?</article>', html, re.S)


def text_of(html: str) -> str:
    """What a reader sees of ``html``: its text, without tags or attributes."""
    return re.sub(r"<[^>]+>", " ", html)


def test_the_consolidation_result_pane_names_its_entry_once(rita, proposal):
    target = proposal.targets.get(role="target").entry.uid
    result = panes(page_of(rita, proposal.pk))[-1]
    assert 'class="pane pane-result"' in result
    assert text_of(result).count(target) == 1, result
    header = result.split("</header>")[0]
    assert re.search(
        rf'<a href="[^"]+" class="mono">{target}</a><span class="muted"> v2</span>', header
    )


def test_an_existing_successor_pane_names_its_entry_once(rita, memory, agent):
    old = add(memory, agent.actor, "Logs are kept 30 days in Loki.")
    new = add(memory, agent.actor, "Logs are kept 30 days in OpenSearch since March.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "supersession",
            "rationale": "Moved to OpenSearch",
            "old": {"entry_id": old, "version": 1},
            "successor": {"entry_id": new, "version": 1},
        },
    ).proposal
    successor = panes(page_of(rita, p.pk))[-1]
    assert "<h3>Successor</h3>" in successor
    assert text_of(successor).count(new) == 1, successor
    assert '<span class="muted"> v1</span>' in successor


def test_a_pane_without_evidence_says_so_in_one_line(rita, memory, agent):
    p = consolidate(
        memory, agent.actor, evidence_a=[], evidence_b=[{"source": "repo", "ref": "a.md"}]
    )
    target, redundant, result = panes(page_of(rita, p.pk))
    assert "Evidence (0)" not in target
    assert "<details" not in target
    assert '<p class="pane-evidence muted small">No evidence cited.</p>' in target
    # A pane with evidence still lists it in its panel, open while it is short.
    assert '<details class="pane-evidence" open>' in redundant
    assert "<summary>Evidence (1)</summary>" in redundant
    assert "<summary>Evidence (1)</summary>" in result
