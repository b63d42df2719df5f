"""The proposal page: inputs → result with word highlights and lost details, evidence with its
declaration snapshot, the server's verification, and a recall preview whose "after" matches what
recall really returns once the proposal is approved — computed without writing anything."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import actions as memory_actions
from memory.actors import Actor
from memory.search import search
from memory.search.lexical import MAX_STATEMENTS
from proposals.requests import submit_request
from review import actions, pages
from review.recall_preview import MAX_PREVIEWS, recall_preview
from tests.review_ui.conftest import add, consolidate

pytestmark = pytest.mark.django_db


def page_of(client, pk: int) -> str:
    r = client.get(f"/review/proposals/{pk}/")
    assert r.status_code == 200, r.content
    return r.content.decode()


def test_two_input_consolidation_shows_three_panes_with_highlights(rita, lossy):
    html = page_of(rita, lossy.pk)
    assert 'class="panes-flow three"' in html
    assert html.count('<article class="pane') == 3
    # The lost details are marked where they occur, in the source panes.
    source = html.split('<div class="pane-inputs">')[1].split('<div class="flow-arrow"')[0]
    for detail in ("02:00", "UTC", "deploy.sh"):
        assert (
            f'<mark class="lost gone" title="Lost detail: not in the result">{detail}</mark>'
            in source
        )
    assert "<del " in source  # "Deploy runs at … via" is dropped
    assert "Lost here:" in source
    # The verification: similarity, lost details, checks.
    assert "Server verification" in html and "weakest pair" in html
    assert '<span class="badge check warn">warn</span>' in html
    # Three acknowledgement boxes, a comment for each decision (each with its own label) and
    # the two buttons with their exact names.
    assert html.count('name="acknowledge"') == 3
    assert '<label for="approve-comment">Approval comment</label>' in html
    assert '<label for="reject-comment">Rejection comment (required)</label>' in html
    assert re.search(r"<button[^>]*>Approve</button>", html)
    assert re.search(r"<button[^>]*>Reject</button>", html)
    assert 'hx-disabled-elt="find button"' in html


def test_result_pane_marks_words_new_in_the_result(rita, memory, agent):
    p = consolidate(
        memory,
        agent.actor,
        a="Deploy runs at 02:00 UTC",
        b="Deploys run nightly at 02:00 UTC",
        body="Deploys run nightly at 02:00 UTC from the release branch",
    )
    html = page_of(rita, p.pk)
    result = html.split('<div class="pane-output">')[1].split("</article>")[0]
    assert '<ins title="New in the result">from the release branch</ins>' in result
    inline = html.split('class="body inline-diff">')[1].split("</p>")[0]
    assert "<del" in inline and "<ins" in inline


def test_a_conflict_recorded_between_the_inputs_is_named(rita, memory, agent, proposal):
    first, second = (t.entry.uid for t in proposal.targets.order_by("position"))
    assert 'id="input-conflicts"' not in page_of(rita, proposal.pk)
    outsider = add(memory, agent.actor, "Deploys run weekly on Sundays")
    memory_actions.record_conflict(
        memory, actor=agent.actor, from_entry=first, to_entry=outsider
    )  # with an entry the proposal does not touch: not this page's business
    assert 'id="input-conflicts"' not in page_of(rita, proposal.pk)
    memory_actions.record_conflict(memory, actor=agent.actor, from_entry=second, to_entry=first)
    html = page_of(rita, proposal.pk)
    notice = html.split('id="input-conflicts"')[1].split("</div>")[0]
    assert "recorded as contradicting each other" in notice
    assert f'href="/memories/acme/entries/{second}/"' in notice
    assert f'href="/memories/acme/entries/{first}/"' in notice
    assert outsider not in notice


def test_evidence_shows_source_authority_and_verification_snapshot(rita, proposal):
    html = page_of(rita, proposal.pk)
    assert "repository attested · verified" in html
    assert "untrusted · unknown" in html  # chat has no declaration
    assert 'class="src">repo</span>' in html and 'class="src">chat</span>' in html


def test_entry_links_go_to_the_timeline(rita, proposal):
    html = page_of(rita, proposal.pk)
    for t in proposal.targets.all():
        assert f'href="/memories/acme/entries/{t.entry.uid}/"' in html


def test_supersession_with_a_new_successor_shows_old_and_successor(rita, memory, agent):
    old = add(memory, agent.actor, "Logs are kept 30 days in Loki.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "supersession",
            "rationale": "Moved to OpenSearch",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "Logs are kept 30 days in OpenSearch.", "kind": "fact"},
        },
    ).proposal
    html = page_of(rita, p.pk)
    assert "Successor: a new fact" in html and "Old (becomes superseded)" in html
    assert '<ins title="New in the result">OpenSearch</ins>' in html
    assert "new successor" in html and "joins" in html  # the recall preview


def test_cleanup_lists_the_entries_without_a_result_pane(rita, memory, agent):
    ids = [
        add(memory, agent.actor, f"Scratch note {i} on the build cache", kind="working_note")
        for i in range(3)
    ]
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": i, "version": 1} for i in ids],
        },
    ).proposal
    html = page_of(rita, p.pk)
    assert "Entries this cleanup forgets" in html
    assert html.count('<article class="pane pane-entry"') == 3
    assert 'class="pane-output"' not in html


def test_decided_proposal_shows_who_and_links_operation_and_revision(rita, reviewer, proposal):
    result = actions.approve_proposal(proposal.pk, actor=reviewer.actor, comment="Same <b>fact</b>")
    assert result.operation is not None and result.revision is not None
    html = page_of(rita, proposal.pk)
    assert "by <strong>rita-key</strong>" in html
    assert f'href="/operations/{result.operation.pk}/"' in html
    assert f'href="/memories/acme/revisions/{result.revision.number}/"' in html
    assert "Same &lt;b&gt;fact&lt;/b&gt;" in html
    assert "Approved: current-state recall now returns the result" in html
    assert "<button" not in html.split('id="decision"')[1].split("</section>")[0]


def test_stale_proposal_names_the_revision_that_made_it_stale(rita, memory, agent, proposal):
    target = proposal.targets.order_by("position")[0].entry.uid
    result = memory_actions.revise_entry(
        memory, actor=agent.actor, entry_uid=target, body="Deploys run at 04:00 UTC."
    )
    html = page_of(rita, proposal.pk)
    assert "stale" in html
    assert result.revision is not None
    assert f'href="/memories/acme/revisions/{result.revision.number}/"' in html


# --- Recall preview ----------------------------------------------------------------------------


def _ids(hits) -> list[str]:
    return [h.entry_id for h in hits]


def _rita() -> Actor:
    from django.contrib.auth.models import User

    return Actor.for_user(User.objects.get(username="rita"))


def _after_matches_real_recall(memory, proposal, acknowledge=()) -> None:
    """Approve for real and compare each previewed query's real recall with the preview."""
    reader = _rita()
    visible = pages.get_visible_proposal(reader, proposal.pk)
    assert visible is not None
    targets = list(visible.targets.all())
    preview = recall_preview(memory, proposal, targets, actor=reader)
    assert preview.items
    actions.approve_proposal(proposal.pk, actor=reader, acknowledge_lost_details=list(acknowledge))
    for item in preview.items:
        real = search(memory, actor=reader, query=item.query, limit=5).hits
        assert [h.body for h in real] == [h.body for h in item.after], item.query
        known = [h.entry_id for h in item.after if h.change != "joins"]
        assert known == [h.entry_id for h in real if h.entry_id in known]


def test_preview_of_a_consolidation_matches_recall_after_approval(memory, agent, proposal):
    reader = _rita()
    targets = list(proposal.targets.order_by("position"))
    target, redundant = targets[0].entry.uid, targets[1].entry.uid
    preview = recall_preview(memory, proposal, targets, actor=reader)
    first = preview.items[0]
    assert set(_ids(first.before)) >= {target, redundant}
    assert {h.entry_id: h.change for h in first.before}[redundant] == "leaves"
    assert redundant not in _ids(first.after)
    assert {h.entry_id: h.change for h in first.after}[target] == "new_version"
    _after_matches_real_recall(memory, proposal)


def test_in_a_fused_order_the_merged_entry_keeps_its_rank_in_the_preview(
    memory, agent, monkeypatch
):
    """With the vector channel (or quality ranking) the hits are not in the lexical channel's
    order: the consolidation target, recalled first now, was appended after every other hit,
    fell out of the shown five and the page said it would no longer be recalled."""
    from review import recall_preview as rp

    target = add(memory, agent.actor, "Commit messages should be short and imperative.")
    redundant = add(memory, agent.actor, "Dana likes short commit messages, imperative mood.")
    for i in range(6):
        add(memory, agent.actor, f"Commit hook number {i} checks the messages of commit {i}.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "consolidation",
            "rationale": "Same preference",
            "target": {"entry_id": target, "version": 1},
            "redundant": [{"entry_id": redundant, "version": 1}],
            "body": "Commit messages should be short and imperative (Dana likes the "
            "imperative mood).",
        },
    ).proposal
    real_search = rp.search

    def fused(*args, **kwargs):
        result = real_search(*args, **kwargs)
        first = [h for h in result.hits if h.entry_id in (target, redundant)]
        others = [h for h in result.hits if h.entry_id not in (target, redundant)]
        result.hits = sorted(first, key=lambda h: h.entry_id != target) + others[::-1]
        return result

    monkeypatch.setattr(rp, "search", fused)
    targets = list(p.targets.order_by("position"))
    item = recall_preview(memory, p, targets, actor=_rita()).items[0]
    assert [h.entry_id for h in item.before[:2]] == [target, redundant]
    assert item.after[0].entry_id == target and item.after[0].change == "new_version"
    assert redundant not in _ids(item.after)
    assert item.dropped == []


def test_preview_of_a_supersession_matches_recall_after_approval(memory, agent):
    old = add(memory, agent.actor, "The staging database is db-stage-3.")
    add(memory, agent.actor, "The staging database has nightly snapshots.")
    p = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "supersession",
            "rationale": "Moved",
            "old": {"entry_id": old, "version": 1},
            "successor": {"body": "The staging database is db-stage-4.", "kind": "fact"},
        },
    ).proposal
    _after_matches_real_recall(memory, p, actions.lost_detail_names(p))


def test_preview_of_a_promotion_and_a_cleanup_match_recall_after_approval(memory, agent):
    n1 = add(
        memory,
        agent.actor,
        "Working note: scheduler lease is 30s",
        kind="working_note",
        tier="session",
        session_id="s1",
    )
    n2 = add(
        memory,
        agent.actor,
        "Working note: the scheduler lease of 30s keeps expiring",
        kind="working_note",
        tier="session",
        session_id="s2",
    )
    promo = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "promotion",
            "rationale": "Seen twice",
            "notes": [{"entry_id": n1, "version": 1}, {"entry_id": n2, "version": 1}],
            "target_kind": "fact",
            "body": "The scheduler lease is 30s and keeps expiring under load.",
        },
    ).proposal
    _after_matches_real_recall(memory, promo, acknowledge=actions.lost_detail_names(promo))
    ids = [add(memory, agent.actor, f"Scratch note {i} about the build cache") for i in range(3)]
    clean = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": i, "version": 1} for i in ids],
        },
    ).proposal
    _after_matches_real_recall(memory, clean)


def test_the_proposal_page_writes_nothing_and_takes_no_lock(rita, lossy):
    with CaptureQueriesContext(connection) as ctx:
        page_of(rita, lossy.pk)
    writes = [
        q["sql"]
        for q in ctx.captured_queries
        if re.match(r"\s*(INSERT|UPDATE|DELETE)", q["sql"], re.I) or "FOR UPDATE" in q["sql"]
    ]
    assert writes == []


def test_proposal_page_costs_a_bounded_number_of_queries(
    rita, memory, agent, lossy, django_assert_max_num_queries
):
    # 3 (the signed-in reviewer) + 6 (proposal, targets, decisions, evidence, and — added with
    # the discussion — its comments and amendments) + 2 (the previous / next proposal in the
    # inbox order, keyset reads) + 1 (conflicts recorded between its entries) + the recall preview
    # (per previewed entry: the lexical statistics of its terms, the lexical channel's tiers, the
    # hits' rows and their provenance).
    with django_assert_max_num_queries(3 + 9 + (1 + MAX_STATEMENTS + 2) * MAX_PREVIEWS):
        page_of(rita, lossy.pk)
    ids = [add(memory, agent.actor, f"Build cache note number {i}") for i in range(12)]
    big = submit_request(
        actor=agent.actor,
        data={
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "Low value",
            "entries": [{"entry_id": i, "version": 1} for i in ids],
        },
    ).proposal
    with django_assert_max_num_queries(3 + 9 + (1 + MAX_STATEMENTS + 2) * MAX_PREVIEWS):
        html = page_of(rita, big.pk)
    assert "8 more affected entries not previewed." in html


@pytest.fixture(autouse=True)
def _cast(reviewer) -> None:
    """rita exists in every test here."""


def test_the_page_names_one_policy_the_one_the_current_revision_was_verified_under(
    rita, memory, proposal
):
    from django.contrib.auth.models import User

    from proposals.actions import amend_proposal
    from proposals.models import Proposal
    from proposals.verify import policy_version

    filed_under = policy_version(memory)
    reviewer = Actor.for_user(User.objects.get(username="rita"))
    memory_actions.update_memory_policy(
        memory, actor=reviewer, policy={"approvals_required": {"consolidation": 2}}
    )
    memory.refresh_from_db()
    in_force = policy_version(memory)
    assert in_force != filed_under
    # The amendment is verified again, under the policy in force now.
    fresh = Proposal.objects.get(pk=proposal.pk)
    amend_proposal(fresh, actor=reviewer, changes={"body": f"{fresh.payload['body']} (ok)"})
    html = page_of(rita, proposal.pk)
    assert filed_under not in html
    assert html.count(in_force) == 1
    assert f'Verified under policy <span class="code">{in_force}</span>.' in html
