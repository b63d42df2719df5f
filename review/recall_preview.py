"""Recall preview: what current-state recall returns for each affected entry's own text now, and
what it would return after approval — so a reviewer sees what agents will see.

How "after" is computed (a deliberate choice)
    It is *simulated, never written*. "Now" is the real ``memory.search.search`` (read-only, no
    lock). "After" applies the approval's known effect (DESIGN.md §9) to that hit list: entries
    the approval retires or supersedes (redundant, old, notes, cleanup entries) leave it; the
    consolidation target shows the merged body as its next version; a new successor or promoted
    entry joins it. Changed and new bodies are placed by the lexical channel's own ordering
    rule — more distinct query terms matched, then shorter text, then entry id — over the
    analyzer's tokens (``memory.text``), after the same admission floor. With the lexical
    channel alone and quality ranking off (the default) that is exactly the order recall will
    produce; with an embedding provider or quality ranking on, the preview says it is
    approximate, and a changed body keeps the rank its entry has now (a new one the best rank
    of the entries it replaces).

    The alternative — running the real approval inside a savepoint and rolling it back — was
    rejected: the approval is a durable transaction that takes the Memory lock (on SQLite the
    database's write lock), so every page view would queue behind and block real writers, burn
    sequence values, and risk leaving something behind if a later change forgot the rollback.
    A page view must never write.

Cost: at most :data:`MAX_PREVIEWS` searches (each a fixed number of queries), whatever the
proposal's size.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.actors import Actor
from memory.models import Memory
from memory.search import Hit, content_terms, query_floor, query_terms, search, setting
from memory.text import tokenize, words
from proposals.kinds import kind_of
from proposals.models import Proposal, ProposalTarget, target_map

#: Hits shown per preview.
PREVIEW_LIMIT = 5
#: Affected entries previewed (a cleanup may list 50; the page stays bounded).
MAX_PREVIEWS = 4
_NEW = 1 << 62  # sorts after every real id: a new entry / version has the highest id

LEAVES = "leaves"
NEW_VERSION = "new_version"
JOINS = "joins"


@dataclass
class PreviewHit:
    entry_id: str
    version: int | None
    body: str
    change: str = ""
    validity: str = "current"


@dataclass
class Preview:
    entry_id: str
    query: str
    before: list[PreviewHit]
    after: list[PreviewHit]
    approximate: bool = False
    # Entries recalled now whose new text would no longer be recalled for this query.
    dropped: list[str] = field(default_factory=list)


@dataclass
class RecallPreview:
    items: list[Preview] = field(default_factory=list)
    omitted: int = 0


@dataclass
class _Candidate:
    entry_pk: int
    version_pk: int
    entry_id: str
    version: int | None
    body: str
    change: str


@dataclass
class Effect:
    """What approval would do to current-state recall, without doing it."""

    leaving: set[int] = field(default_factory=set)
    changed: list[_Candidate] = field(default_factory=list)
    joining: list[_Candidate] = field(default_factory=list)


def effect_of(proposal: Proposal, targets: Sequence[ProposalTarget]) -> Effect:
    """The kind's recall effect (``proposals.kinds``) as preview candidates: a rewritten entry
    keeps its version when its words do not change, else shows as its next version."""
    described = kind_of(proposal.kind).recall_effect(proposal, target_map(targets))
    effect = Effect(leaving={t.entry_id for t in described.leaves})
    for t, body in described.rewrites:
        same = words(body) == words(t.version.body)
        effect.changed.append(
            _Candidate(
                t.entry_id,
                t.version_id if same else _NEW,
                t.entry.uid,
                t.version_number if same else t.version_number + 1,
                body,
                "" if same else NEW_VERSION,
            )
        )
    for label, body in described.joins:
        effect.joining.append(_Candidate(_NEW, _NEW, label, 1, body, JOINS))
    return effect


def _lexical_key(terms: Sequence[str], body: str, entry_pk: int, version_pk: int) -> tuple:
    """The lexical channel's order: matched terms, then fewer tokens (``term_count``), ids."""
    tokens = tokenize(body)
    present = set(tokens)
    matched = sum(1 for t in terms if t in present)
    return (-matched, len(tokens), entry_pk, version_pk)


def _admitted(terms: Sequence[str], body: str) -> bool:
    """Whether the lexical channel admits ``body``: the floor counts content terms only."""
    tokens = set(tokenize(body))
    return sum(1 for t in content_terms(terms) if t in tokens) >= query_floor(terms)


def _hit(h: Hit, change: str) -> PreviewHit:
    return PreviewHit(h.entry_id, h.version, h.body, change, h.validity)


def preview_one(
    memory: Memory,
    *,
    actor: Actor,
    entry_id: str,
    query: str,
    effect: Effect,
    limit: int = PREVIEW_LIMIT,
) -> Preview:
    changed_pks = {c.entry_pk for c in effect.changed}
    fetch = min(limit + len(effect.leaving) + len(changed_pks), setting("MAX_LIMIT", 50))
    result = search(memory, actor=actor, query=query, limit=fetch)

    def change_of(h: Hit) -> str:
        if h.entry_pk in effect.leaving:
            return LEAVES
        for c in effect.changed:
            if c.entry_pk == h.entry_pk:
                return c.change
        return ""

    before = [_hit(h, change_of(h)) for h in result.hits[:limit]]

    terms = query_terms(query)
    kept = [h for h in result.hits if h.entry_pk not in effect.leaving | changed_pks]
    keys = [_lexical_key(terms, h.body, h.entry_pk, h.version_pk) for h in kept]
    after: list[Any] = list(kept)
    approximate = bool(result.trace.quality.get("enabled")) or any(
        "vector" in h.channels for h in result.hits
    )
    # Keys of the kept hits are sorted when the lexical channel alone ordered them; otherwise
    # (fused with the vector channel, or quality-reordered) a rewritten entry keeps the rank
    # its current version has now, and a new one takes the best rank of the entries it
    # replaces — appended after every kept hit, the merged entry fell out of the shown hits
    # and the page said it would no longer be recalled.
    lexical_order = keys == sorted(keys)
    rank_now = {h.entry_pk: float(i) for i, h in enumerate(result.hits)}
    ranks = [rank_now[h.entry_pk] for h in kept]
    replaced = [rank_now[pk] for pk in effect.leaving | changed_pks if pk in rank_now]
    for c in [*effect.changed, *effect.joining]:
        key = _lexical_key(terms, c.body, c.entry_pk, c.version_pk)
        if not terms or not _admitted(terms, c.body):
            continue  # not admitted by the lexical channel: it will not be recalled
        rank = rank_now.get(c.entry_pk, min(replaced, default=float("inf")))
        at = bisect_right(keys, key) if lexical_order else bisect_right(ranks, rank)
        keys.insert(at, key)
        ranks.insert(at, rank)
        after.insert(at, c)
    shown_after = after[:limit]
    after_ids = {x.entry_id for x in shown_after}
    dropped = [
        h.entry_id for h in before if h.change == NEW_VERSION and h.entry_id not in after_ids
    ]
    return Preview(
        dropped=dropped,
        entry_id=entry_id,
        query=query,
        before=before,
        after=[
            _hit(x, "")
            if isinstance(x, Hit)
            else PreviewHit(x.entry_id, x.version, x.body, x.change)
            for x in shown_after
        ],
        approximate=approximate,
    )


def recall_preview(
    memory: Memory,
    proposal: Proposal,
    targets: Sequence[ProposalTarget],
    *,
    actor: Actor,
    limit: int = PREVIEW_LIMIT,
) -> RecallPreview:
    """Before/after recall for the affected entries' own texts (the first
    :data:`MAX_PREVIEWS` distinct ones)."""
    effect = effect_of(proposal, targets)
    seen: set[str] = set()
    queries: list[ProposalTarget] = []
    for t in targets:
        text = t.version.body.strip()
        if text and text not in seen:
            seen.add(text)
            queries.append(t)
    out = RecallPreview(omitted=max(len(queries) - MAX_PREVIEWS, 0))
    for t in queries[:MAX_PREVIEWS]:
        out.items.append(
            preview_one(
                memory,
                actor=actor,
                entry_id=t.entry.uid,
                query=t.version.body,
                effect=effect,
                limit=limit,
            )
        )
    return out
