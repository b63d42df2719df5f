"""The seeded Memory of ``bench/maintenance_throughput.py`` (imported by it once Django is set
up): N entries written with bulk inserts that produce exactly the rows the actions would, then a
share of real revisions through the revision writer (see that script's docstring)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from seed_common import (
    KINDS,
    BulkCreate,
    Cite,
    add_revisions,
    declared_source,
    load_adds,
    vocabulary,
    zipf_words,
)

from memory import actions, db_stats, lifecycle, maintenance
from memory.actions.evidence import EvidenceInput, resolve_evidence
from memory.actors import Actor
from memory.models import Entry, Memory, Relation, Revision
from memory.text import content_hash

SYSTEM = Actor.system("bench")


# --- The seed ------------------------------------------------------------------------------------


class Words:
    """Entry bodies of Zipf-distributed words (``seed_common.zipf_words``)."""

    def __init__(self, rng: random.Random, vocab: list[str]) -> None:
        self.rng, self.vocab = rng, vocab

    def body(self) -> str:
        words = zipf_words(self.rng, self.vocab, self.rng.randint(8, 25))
        if self.rng.random() < 0.1:  # values, so the value-difference rules have work
            words += ["at", f"{self.rng.randint(1, 23)}:{self.rng.choice(['00', '30'])}"]
        return " ".join(words).capitalize() + "."


def sources() -> tuple[Cite, Cite]:
    return (
        declared_source("bench-repo"),
        declared_source("bench-chat", "user_asserted", "not_verified"),
    )


def seed(slug: str, n: int, rng_seed: int, batch: int = 5000) -> Memory:
    rng = random.Random(rng_seed)
    words = Words(rng, vocabulary(rng))
    repo, chat = sources()
    memory = Memory.objects.create(slug=slug, name=f"Maintenance bench {n}")
    t0 = time.monotonic()
    now = timezone.now()
    start_at = now - timedelta(days=730)
    step = timedelta(days=720) / max(1, n)
    number = 0
    for start in range(0, n, batch):
        size = min(batch, n - start)
        with transaction.atomic():
            specs = []
            for _ in range(size):
                r = rng.random()
                tier = "session" if r < 0.03 else "short" if r < 0.28 else "long"
                specs.append(
                    {
                        "kind": rng.choice(KINDS),
                        "tier": tier,
                        "session_id": f"s-{rng.randint(1, 400)}" if tier == "session" else "",
                        "sensitivity": rng.choice(["internal"] * 18 + ["public", "confidential"]),
                        "current_state": rng.random() < 0.2,
                    }
                )
            entries = Entry.objects.bulk_create([Entry(memory=memory, **s) for s in specs])
            revisions = Revision.objects.bulk_create(
                add_revisions(memory, SYSTEM, number, len(entries), start_at, step)
            )
            number += len(entries)
            bodies = [words.body() for _ in entries]
            cites = [
                None if rng.random() >= 0.3 else repo if rng.random() < 0.6 else chat
                for _ in entries
            ]
            effective = [
                rev.recorded_at - timedelta(days=3) if rng.random() < 0.1 else None
                for rev in revisions
            ]
            observed = [
                rev.recorded_at if e.pk % 3 == 0 else None
                for e, rev in zip(entries, revisions, strict=True)
            ]
            load_adds(BulkCreate(), memory, entries, revisions, bodies, cites, effective, observed)
        print(f"  seed: {start + size}/{n} entries ({time.monotonic() - t0:.0f}s)", flush=True)
    memory.head = number
    memory.save(update_fields=["head"])
    history(memory, rng)
    db_stats.analyze(db_stats.MEMORY_TABLES)
    print(f"  seed: done in {time.monotonic() - t0:.0f}s", flush=True)
    return memory


def _write(
    memory: Memory, kind: str, reason: str, changes: list, relations: Sequence[Any] = ()
) -> None:
    with transaction.atomic():
        locked = actions.lock_memory(memory.pk)
        actions.write_revision(
            locked, actor=SYSTEM, kind=kind, reason=reason, changes=changes, relations=relations
        )


def history(memory: Memory, rng: random.Random) -> None:
    """Real revisions through the writer over a share of the entries (the projection follows)."""
    rows = list(
        Entry.objects.filter(memory=memory).values_list("pk", "kind", "tier", "current_state")
    )
    rng.shuffle(rows)
    n = len(rows)
    pick = iter(rows)

    def take(k: int, cond: Callable[[tuple], bool] = lambda r: True) -> list[Entry]:
        out = []
        for row in pick:
            if cond(row):
                out.append(row[0])
                if len(out) == k:
                    break
        return list(Entry.objects.filter(pk__in=out).order_by("pk"))

    def chunks(items: list, size: int = 500) -> Iterator[list]:
        for i in range(0, len(items), size):
            yield items[i : i + size]

    A = actions
    for chunk in chunks(take(n // 12)):
        _write(
            memory,
            "forget",
            "bench",
            [A.Change(entry=e, to_state="inactive", state_reason="bench") for e in chunk],
        )
    for chunk in chunks(take(n // 50)):
        reason = maintenance.AUTO_DECAY_REASON
        _write(
            memory,
            "forget",
            reason,
            [A.Change(entry=e, to_state="inactive", state_reason=reason) for e in chunk],
        )
    for chunk in chunks(take(n // 200), 100):
        _write(
            memory,
            "quarantine",
            "bench",
            [
                A.Change(entry=e, to_state="quarantined", state_reason="quarantine:bench")
                for e in chunk
            ],
        )
    for chunk in chunks(take(n // 100), 200):
        attrs = {"pinned": True, "pin_category": "durable_decision"}
        _write(memory, "pin", "bench", [A.Change(entry=e, attributes=attrs) for e in chunk])
    revised = take(n // 50, lambda r: r[1] == "fact" and r[3])
    cite = resolve_evidence([EvidenceInput("bench-repo", "deploy.yml")])
    for chunk in chunks(revised, 200):
        changes = []
        for e in chunk:
            body = f"Revised {e.uid}: the deploy target of {e.pk} is eu-{e.pk % 7}."
            changes.append(
                A.Change(
                    entry=e,
                    new_body=A.NewBody(
                        body=body,
                        content_hash=content_hash(e.kind, body, ["bench-repo|deploy.yml"]),
                        evidence=cite if e.pk % 2 else [],
                    ),
                )
            )
        _write(memory, "revise", "bench", changes)
    for kind, state, count in (
        ("supersede", "active", n // 200),
        ("consolidate", "inactive", n // 400),
    ):
        pairs = take(2 * count, lambda r: r[2] != "session")
        for chunk in chunks(list(zip(pairs[::2], pairs[1::2], strict=False)), 100):
            rel = "supersedes" if kind == "supersede" else "consolidated_into"
            changes = [
                A.Change(entry=old, to_state=state, state_reason=f"{kind}d") for old, _ in chunk
            ]
            relations = [
                A.NewRelation(kind=rel, from_entry=new, to_entry=old)
                if rel == "supersedes"
                else A.NewRelation(kind=rel, from_entry=old, to_entry=new)
                for old, new in chunk
            ]
            _write(memory, kind, "bench", changes, relations)
    conflicted = [e.pk for e in take(n // 250)]
    with transaction.atomic():
        Relation.objects.bulk_create(
            [
                Relation(memory=memory, kind="conflicts_with", from_entry_id=a, to_entry_id=b)
                for a, b in zip(conflicted[::2], conflicted[1::2], strict=False)
            ]
        )
        lifecycle.refresh(conflicted)
    # Some recall counts for the retention score (a derived counter, not an authoritative row).
    with connection.cursor() as c:
        c.execute(
            "UPDATE memory_lifecycleprojection SET recall_count = entry_id %% 9, "
            "last_recalled_at = recorded_at WHERE memory_id = %s AND entry_id %% 11 = 0",
            [memory.pk],
        )


def fresh_database() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as c:
            c.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    else:
        name = Path(str(connection.settings_dict["NAME"]))
        connection.close()
        name.unlink(missing_ok=True)
    call_command("migrate", verbosity=0)
