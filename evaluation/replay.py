"""Policy replay: what a candidate policy would change in recall, before anyone enables it.

Re-runs a list of queries against one Memory twice — under its current policy and under a
candidate (the current policy with the candidate's keys merged in, validated exactly as a
policy change would be) — and reports per query which entries enter or leave the top k, which
move and by how many ranks, the same for the Context Pack's items, and how many candidates the
validity filter withheld. Read-only: the candidate is applied to an unsaved copy of the Memory
(:func:`evaluation.workbench.under_policy`), so nothing is written, not even the policy.

Queries come from a list the caller supplies (``--queries FILE``: one query per line, or a JSON
list of strings or ``{"query": …, "intent": …}`` objects). Recall events (``memory.recall_events``)
record which entries were served, never the query text (statistics hold no content, DESIGN.md
§6), so there is nothing recorded to replay today; :func:`recorded_queries` reads a recall-event
model only if one with a ``query`` field is ever installed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist

from lib.errors import ValidationFailed
from memory.actions import clean_policy
from memory.actors import Actor
from memory.context_pack import build_context_pack
from memory.models import Memory
from memory.search import search

from .workbench import under_policy

MAX_QUERIES = 200


@dataclass
class Query:
    text: str
    intent: str | None = None


@dataclass
class Move:
    entry_id: str
    version: int
    before: int | None  # rank under the current policy (None: not in the top k)
    after: int | None  # rank under the candidate
    label: str  # the first words of the body

    @property
    def delta(self) -> int:
        return (self.before or 0) - (self.after or 0)


@dataclass
class QueryReplay:
    query: str
    intent: str | None
    current: list[str]  # entry ids in order, current policy
    candidate: list[str]
    entered: list[Move] = field(default_factory=list)
    left: list[Move] = field(default_factory=list)
    moved: list[Move] = field(default_factory=list)
    pack_entered: list[str] = field(default_factory=list)
    pack_left: list[str] = field(default_factory=list)
    validity_filtered: dict[str, int] = field(default_factory=dict)
    quality_current: str = ""
    quality_candidate: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.entered or self.left or self.moved or self.pack_entered or self.pack_left)


@dataclass
class ReplayReport:
    memory: str
    limit: int
    current_policy: dict[str, Any]
    candidate_policy: dict[str, Any]
    source: str  # "recall_events" or "query_file"
    queries: list[QueryReplay]

    @property
    def changed(self) -> int:
        return sum(1 for q in self.queries if q.changed)

    def summary(self) -> dict[str, int]:
        return {
            "queries": len(self.queries),
            "queries_changed": self.changed,
            "entered": sum(len(q.entered) for q in self.queries),
            "left": sum(len(q.left) for q in self.queries),
            "moved": sum(len(q.moved) for q in self.queries),
            "pack_entered": sum(len(q.pack_entered) for q in self.queries),
            "pack_left": sum(len(q.pack_left) for q in self.queries),
        }

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "summary": self.summary(),
            "queries": [asdict(q) | {"changed": q.changed} for q in self.queries],
        }


def candidate_policy(memory: Memory, changes: Any) -> dict[str, Any]:
    """The Memory's policy with ``changes`` merged in, validated like a policy update."""
    cleaned = clean_policy(changes)
    return {**memory.policy, **cleaned}


def parse_queries(text: str) -> list[Query]:
    """One query per line, or a JSON list of strings / ``{"query", "intent"}`` objects."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            raw = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValidationFailed(details={"queries": [f"Not valid JSON: {exc.msg}."]}) from exc
        out = []
        for i, item in enumerate(raw):
            if isinstance(item, str):
                out.append(Query(item))
            elif isinstance(item, dict) and isinstance(item.get("query"), str):
                out.append(Query(item["query"], item.get("intent")))
            else:
                raise ValidationFailed(details={f"queries[{i}]": ["A string or {query, intent}."]})
        queries = out
    else:
        queries = [Query(line.strip()) for line in text.splitlines() if line.strip()]
    queries = [q for q in queries if q.text.strip()]
    if not queries:
        raise ValidationFailed(details={"queries": ["No query given."]})
    if len(queries) > MAX_QUERIES:
        raise ValidationFailed(details={"queries": [f"At most {MAX_QUERIES} queries."]})
    return queries


def recorded_queries(memory: Memory, limit: int = MAX_QUERIES) -> list[Query] | None:
    """The distinct queries of the Memory's recall events, newest first — or None when no
    recall-event record with query text exists in this installation."""
    try:
        model = apps.get_model("memory", "RecallEvent")
        model._meta.get_field("query")
    except (LookupError, FieldDoesNotExist):
        return None
    seen: dict[str, None] = {}
    rows = model.objects.filter(memory=memory).order_by("-pk").values_list("query", flat=True)
    for text in rows[: limit * 20].iterator():
        if text and text not in seen:
            seen[text] = None
            if len(seen) >= limit:
                break
    return [Query(t) for t in seen]


def _label(body: str) -> str:
    words = body.split()
    return " ".join(words[:8]) + (" …" if len(words) > 8 else "")


def replay_query(
    memory: Memory, candidate: Memory, *, actor: Actor, query: Query, limit: int
) -> QueryReplay:
    before = search(
        memory, actor=actor, query=query.text, limit=limit, intent=query.intent, trace=True
    )
    after = search(candidate, actor=actor, query=query.text, limit=limit, intent=query.intent)
    rank_before = {h.entry_id: h.rank for h in before.hits}
    rank_after = {h.entry_id: h.rank for h in after.hits}
    hits = {h.entry_id: h for h in [*before.hits, *after.hits]}
    out = QueryReplay(
        query=query.text,
        intent=query.intent,
        current=[h.entry_id for h in before.hits],
        candidate=[h.entry_id for h in after.hits],
        validity_filtered=dict(before.trace.validity_filter),
        quality_current=str(before.trace.quality.get("reason", "")),
        quality_candidate=str(after.trace.quality.get("reason", "")),
    )
    for entry_id, hit in hits.items():
        move = Move(
            entry_id,
            hit.version,
            rank_before.get(entry_id),
            rank_after.get(entry_id),
            _label(hit.body),
        )
        if move.before is None:
            out.entered.append(move)
        elif move.after is None:
            out.left.append(move)
        elif move.before != move.after:
            out.moved.append(move)
    out.moved.sort(key=lambda m: m.after or 0)
    pack_before = build_context_pack(memory, actor=actor, query=query.text, intent=query.intent)
    pack_after = build_context_pack(candidate, actor=actor, query=query.text, intent=query.intent)
    ids_before = [i.entry_id for i in pack_before.items]
    ids_after = [i.entry_id for i in pack_after.items]
    out.pack_entered = [e for e in ids_after if e not in ids_before]
    out.pack_left = [e for e in ids_before if e not in ids_after]
    return out


def replay(
    memory: Memory,
    *,
    actor: Actor,
    policy: Any,
    queries: list[Query] | None = None,
    limit: int = 10,
) -> ReplayReport:
    """Replay ``queries`` (or the recorded ones) under the current and the candidate policy."""
    merged = candidate_policy(memory, policy)
    source = "query_file"
    if queries is None:
        queries = recorded_queries(memory)
        source = "recall_events"
        if not queries:
            raise ValidationFailed(
                "This Memory has no recorded queries (recall events keep no query text); "
                "give a query list.",
                details={"queries": ["No recorded queries; give the queries to replay."]},
            )
    candidate = under_policy(memory, merged)
    results = [replay_query(memory, candidate, actor=actor, query=q, limit=limit) for q in queries]
    return ReplayReport(
        memory=memory.slug,
        limit=limit,
        current_policy=dict(memory.policy),
        candidate_policy=merged,
        source=source,
        queries=results,
    )
