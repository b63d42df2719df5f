"""Precision and recall of the maintenance passes on a seeded corpus (not a test).

    .venv/bin/python bench/maintenance_eval.py                 # SQLite: /tmp/steward_maint_eval.sqlite3
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/steward_maint_eval .venv/bin/python bench/maintenance_eval.py

Builds a fresh database, writes the corpus of ``bench/maintenance_corpus.py`` through the real
actions (bulk-import style: ``dedupe=false``, so the add-time check files nothing and the health
pass has all the work), enables the four passes in the Memory's policy, runs each for real as
the system actor, and scores what they filed against the hand-made labels:

- near_duplicates: pairs inside each consolidation proposal against pairs inside each labelled
  group (pair precision / recall), and whether every merged body lost no detail;
- contradictions: ``conflicts_with`` observations against the labelled pairs, supersession
  proposals (right old entry, right successor), and false conflicts on the negative control;
- promotion: pairs inside each promotion proposal against the labelled recurring themes, and
  proposals touching a one-session theme (must be 0);
- capacity: with ``capacity_low_entries`` reached, the cleanup list against the expected list
  (the lowest retention scores among eligible low-importance entries; pinned never).

Then reruns every pass and counts new proposals (must be 0).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from bench_env import setup_django

setup_django(fresh_sqlite=Path("/tmp/steward_maint_eval.sqlite3"), broker=False)

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from maintenance_corpus import (  # noqa: E402
    CONTRADICTIONS,
    DISTRACTORS,
    DUPLICATE_GROUPS,
    NEGATIVE_CONTROL,
    RECURRING_THEMES,
    SINGLE_SESSION,
)

from memory import actions, maintenance  # noqa: E402
from memory.actors import Actor  # noqa: E402
from memory.models import Memory, Relation, RelationKind  # noqa: E402
from proposals.models import Proposal  # noqa: E402

Pair = frozenset[str]


def pairs_of(groups: list[list[str]]) -> set[Pair]:
    return {frozenset(p) for g in groups for p in itertools.combinations(sorted(g), 2)}


def pr(predicted: set[Pair], truth: set[Pair]) -> tuple[float, float]:
    tp = len(predicted & truth)
    precision = tp / len(predicted) if predicted else 1.0
    recall = tp / len(truth) if truth else 1.0
    return precision, recall


def fresh_db() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)


def main() -> None:
    fresh_db()
    staff = Actor.for_user(User.objects.create_user("eval", password="x", is_staff=True))
    memory = actions.create_memory(actor=staff, slug="eval", name="Seeded corpus")
    actions.register_source(
        actor=staff,
        name="repo",
        declaration={"authority": "repository_attested", "verification": "verified"},
    )
    agent = Actor(type="agent", id="key:eval", label="eval agent", role="agent")
    evidence = [{"source": "repo", "ref": "CHANGELOG.md"}]

    def add(body: str, **extra: object) -> str:
        extra.setdefault("dedupe", False)
        return actions.add_entry(memory, actor=agent, body=body, **extra).entry.uid  # type: ignore[arg-type]

    dup_groups = [[add(b, kind="fact") for b in g] for g in DUPLICATE_GROUPS]
    for b in DISTRACTORS:
        add(b, kind="fact")
    conflicts = []
    for old, new in CONTRADICTIONS:
        o = add(old, kind="fact", current_state=True)
        n = add(new, kind="fact", current_state=True, evidence=evidence)
        conflicts.append((o, n))
    negatives = [
        add(b, kind="fact", current_state=True, evidence=evidence) for b in NEGATIVE_CONTROL
    ]
    themes = [
        [add(b, kind="working_note", tier="session", session_id=s) for s, b in t]
        for t in RECURRING_THEMES
    ]
    singles = [
        [add(b, kind="working_note", tier="session", session_id=s) for s, b in t]
        for t in SINGLE_SESSION
    ]
    for session in sorted({s for t in RECURRING_THEMES for s, _ in t})[::2]:
        actions.end_session(memory, actor=agent, session_id=session)  # half of them ended
    policy = {
        "capacity_low_entries": 10,
        "jobs": {j: {"enabled": True} for j in ("near_duplicates", "contradictions", "promotion")}
        | {"capacity": {"enabled": True, "max_entries": 10}},
    }
    memory = actions.update_memory_policy(memory, actor=staff, policy=policy)
    system = Actor.system("evaluation")
    entries = Memory.objects.get(pk=memory.pk).entries.count()
    print(f"backend: {connection.vendor}; corpus: {entries} entries")

    def proposals(kind: str) -> list[Proposal]:
        return list(Proposal.objects.filter(memory=memory, kind=kind).order_by("pk"))

    # near_duplicates
    maintenance.run_job(memory, actor=system, job="near_duplicates", dry_run=False)
    filed = proposals("consolidation")
    got = pairs_of([[t.entry.uid for t in p.targets.all()] for p in filed])
    p, r = pr(got, pairs_of(dup_groups))
    lost = sum(1 for x in filed if x.verification.get("lost_details"))
    print(
        f"near_duplicates: {len(filed)} proposals for {len(dup_groups)} groups; "
        f"pair precision {p:.3f} recall {r:.3f}; proposals with lost details {lost}"
    )

    # contradictions
    maintenance.run_job(memory, actor=system, job="contradictions", dry_run=False)
    observed = {
        frozenset((a, b))
        for a, b in Relation.objects.filter(
            memory=memory, kind=RelationKind.CONFLICTS_WITH
        ).values_list("from_entry__uid", "to_entry__uid")
    }
    truth = {frozenset(c) for c in conflicts}
    p, r = pr(observed, truth)
    negative_set = set(negatives)
    false_negative_control = sum(1 for pair in observed if pair & negative_set)
    sup = proposals("supersession")
    right = sum(
        1
        for x in sup
        if (x.payload["old"]["entry_id"], x.payload["successor"]["entry_id"]) in set(conflicts)
    )
    sp = right / len(sup) if sup else 1.0
    print(
        f"contradictions: {len(observed)} conflicts_with for {len(truth)} labelled; "
        f"precision {p:.3f} recall {r:.3f}; false conflicts on the negative control "
        f"({len(negatives)} facts): {false_negative_control}; supersession proposals "
        f"{len(sup)}, right direction {sp:.3f}, recall {right / len(conflicts):.3f}"
    )

    # promotion
    maintenance.run_job(memory, actor=system, job="promotion", dry_run=False)
    promo = proposals("promotion")
    got = pairs_of([[t.entry.uid for t in x.targets.all()] for x in promo])
    p, r = pr(got, pairs_of(themes))
    single_uids = {u for t in singles for u in t}
    wrong = sum(1 for x in promo if {t.entry.uid for t in x.targets.all()} & single_uids)
    print(
        f"promotion: {len(promo)} proposals for {len(themes)} recurring themes; pair precision "
        f"{p:.3f} recall {r:.3f}; proposals touching a one-session theme: {wrong}"
    )

    # capacity
    maintenance.run_job(memory, actor=system, job="capacity", dry_run=False)
    cleanup = proposals("cleanup")
    listed = [e["entry_id"] for x in cleanup for e in x.payload["entries"]]
    from memory.models import LifecycleProjection

    eligible = set(
        LifecycleProjection.objects.filter(
            memory=memory, state="active", importance__lte=1, validity="current", pinned=False
        )
        .exclude(tier="session")
        .values_list("entry__uid", flat=True)
    )
    ok = sum(1 for u in listed if u in eligible)
    print(
        f"capacity: {len(cleanup)} cleanup proposal, {len(listed)} entries (bound 10); "
        f"eligible (active, importance <= 1, current, unpinned, not session tier) "
        f"{ok}/{len(listed)}"
    )

    before = Proposal.objects.filter(memory=memory).count()
    for job in ("near_duplicates", "contradictions", "promotion", "capacity"):
        maintenance.run_job(memory, actor=system, job=job, dry_run=False)
    after = Proposal.objects.filter(memory=memory).count()
    print(f"rerun of every pass: {after - before} new proposals")


if __name__ == "__main__":
    main()
