"""The conformance corpus (fixtures/conformance.json): the same writes and queries give the
same ids, order, validity, importance and reorder on every backend (DESIGN.md §4, inv. 12).

Expectations are written in the fixture, not computed, so passing on SQLite and on PostgreSQL
proves both backends agree with the same stated answer."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memory import actions
from memory.actors import Actor
from memory.models import Entry, LifecycleProjection
from memory.search import RecallFilters, search

from .conftest import supersede

pytestmark = pytest.mark.django_db

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "conformance.json").read_text())


@pytest.fixture
def corpus(memory, agent):
    me = agent.actor
    aliases: dict[str, Entry] = {}
    for step in CORPUS["steps"]:
        op = step["op"]
        if op == "add":
            extra = {k: v for k, v in step.items() if k not in ("op", "as", "body", "kind")}
            # A key writes at most at its own clearance: restricted rows come from the system.
            writer = Actor.system() if extra.get("sensitivity") == "restricted" else me
            result = actions.add_entry(
                memory, actor=writer, body=step["body"], kind=step["kind"], **extra
            )
            aliases[step["as"]] = result.entry
        elif op == "revise":
            actions.revise_entry(
                memory,
                actor=me,
                entry_uid=aliases[step["entry"]].uid,
                body=step["body"],
                evidence=step.get("evidence"),
            )
        elif op == "forget":
            actions.forget_entry(
                memory, actor=me, entry_uid=aliases[step["entry"]].uid, reason=step["reason"]
            )
        elif op == "reactivate":
            actions.reactivate_entry(memory, actor=me, entry_uid=aliases[step["entry"]].uid)
        elif op == "supersede":
            supersede(memory, old=aliases[step["old"]], new=aliases[step["new"]])
        elif op == "conflict":
            actions.record_conflict(
                memory,
                actor=me,
                from_entry=aliases[step["from"]].uid,
                to_entry=aliases[step["to"]].uid,
            )
        elif op == "end_session":
            actions.end_session(memory, actor=me, session_id=step["session_id"])
        else:  # pragma: no cover - a typo in the fixture
            raise AssertionError(f"unknown op {op}")
    return memory, me, aliases


def test_validity_and_importance_match_the_corpus(corpus):
    _, _, aliases = corpus
    rows = {p.entry_id: p for p in LifecycleProjection.objects.all()}
    assert {a: rows[e.pk].validity for a, e in aliases.items() if a in CORPUS["validity"]} == (
        CORPUS["validity"]
    )
    assert {
        a: rows[e.pk].importance for a, e in aliases.items() if a in CORPUS["importance"]
    } == CORPUS["importance"]


def filters_of(data: dict | None) -> RecallFilters | None:
    """A case's ``filters`` as the API's ``FiltersIn`` would validate them."""
    if data is None:
        return None
    times = ("effective_after", "effective_before")
    return RecallFilters.from_request(
        {k: datetime.fromisoformat(v) if k in times else v for k, v in data.items()}
    )


@pytest.mark.parametrize(
    "case",
    CORPUS["queries"],
    ids=lambda c: f"{c['query']}|{c.get('view', 'current')}|{sorted(c.get('filters', {}))}",
)
def test_queries_return_the_stated_hits_in_the_stated_order(corpus, case):
    memory, me, aliases = corpus
    memory.policy = {**CORPUS["policy"], **case.get("policy", {})}
    memory.save(update_fields=["policy"])
    by_pk = {e.pk: a for a, e in aliases.items()}
    result = search(
        memory,
        actor=me,
        query=case["query"],
        limit=case.get("limit", 10),
        view=case.get("view", "current"),
        intent=case.get("intent"),
        trace=True,
        filters=filters_of(case.get("filters")),
    )
    got = [f"{by_pk[h.entry_pk]}@{h.version}" for h in result.hits]
    assert got == case["expect"]
    if "shifts" in case:
        shifts = {by_pk[h.entry_pk]: h.baseline_rank - h.rank for h in result.hits}
        assert shifts == case["shifts"]
        assert result.trace.quality["enabled"] is True
    else:
        assert all(h.baseline_rank == h.rank for h in result.hits)
