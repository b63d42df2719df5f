"""What the benchmark seeds share (imported once Django is set up): the entry kinds, the
Zipf-distributed vocabulary, the declared sources, the rows the add action writes, and the bulk
loaders — ``bulk_create`` on SQLite, ``COPY`` (psycopg 3) of the same model instances on
PostgreSQL."""

from __future__ import annotations

import enum
import functools
import itertools
import json
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, models

from lib.identity import Actor
from memory import lifecycle
from memory.lexical_index import record_versions
from memory.models import (
    Entry,
    EntryVersion,
    Evidence,
    Head,
    LifecycleProjection,
    Revision,
    RevisionChange,
    Source,
    SourceDeclaration,
)
from memory.text import content_hash, indexed_text

#: A bench source with the declaration its evidence snapshots.
Cite = tuple[Source, SourceDeclaration]

KINDS = ["fact", "fact", "fact", "decision", "constraint", "preference", "working_note"]
COMMON = [
    "the",
    "deploy",
    "target",
    "service",
    "queue",
    "cache",
    "database",
    "region",
    "build",
    "release",
    "test",
    "docs",
    "team",
    "leader",
    "election",
    "lock",
    "config",
    "timeout",
    "retry",
    "incident",
    "owner",
    "runbook",
    "api",
    "key",
    "metric",
    "alert",
]


def vocabulary(rng: random.Random, n: int = 6000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pa", "qu", "dro"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return COMMON + sorted(words)


@functools.cache
def _cum_weights(n: int) -> list[float]:
    # What ``random.choices`` accumulates from ``weights``: passing it ready draws the same words.
    return list(itertools.accumulate(1.0 / (r + 1) for r in range(n)))


def zipf_words(rng: random.Random, vocab: list[str], k: int) -> list[str]:
    # Rank-frequency ~ 1/r: common words are common, the tail is long.
    return rng.choices(vocab, cum_weights=_cum_weights(len(vocab)), k=k)


def add_revisions(
    memory: Any,
    actor: Actor,
    after: int,
    count: int,
    start: datetime,
    step: timedelta = timedelta(0),
) -> list[Revision]:
    """``count`` unsaved ``add`` revisions by ``actor``, numbered from ``after + 1``; revision
    ``n`` is recorded at ``start + step * n``."""
    return [
        Revision(
            memory=memory,
            number=number,
            kind="add",
            actor_type=actor.type,
            actor_id=actor.id,
            actor_label=actor.label,
            recorded_at=start + step * number,
        )
        for number in range(after + 1, after + count + 1)
    ]


def first_version(
    memory: Any,
    entry: Entry,
    revision: Revision,
    body: str,
    cited: str | None = None,
    effective_at: datetime | None = None,
) -> EntryVersion:
    """An unsaved version 1 of ``entry`` as the add action writes it, analyzed for search; it
    cites ``ref-<entry pk>`` of the source named ``cited`` (none when ``None``)."""
    text, count = indexed_text(body)
    return EntryVersion(
        memory=memory,
        entry=entry,
        number=1,
        body=body,
        content_hash=content_hash(entry.kind, body, [f"{cited}|ref-{entry.pk}"] if cited else []),
        revision=revision,
        effective_at=effective_at,
        searchable_text=text,
        term_count=count,
    )


def cited_evidence(
    version: EntryVersion,
    source: Source,
    declaration: SourceDeclaration,
    observed_at: datetime | None = None,
) -> Evidence:
    """The unsaved evidence of ``version`` that :func:`first_version` hashed: ``ref-<entry pk>``
    of ``source``, snapshotting ``declaration``."""
    return Evidence(
        version=version,
        position=0,
        source=source,
        ref=f"ref-{version.entry_id}",
        observed_at=observed_at,
        declaration_version=declaration.version,
        authority=declaration.authority,
        verification=declaration.verification,
    )


def add_changes(
    entries: list[Entry], revisions: list[Revision], versions: list[EntryVersion]
) -> list[RevisionChange]:
    """The unsaved changes of the ``add`` revisions: each entry's version 1, made active."""
    return [
        RevisionChange(revision=rev, entry=e, to_version=v, from_state="", to_state="active")
        for e, rev, v in zip(entries, revisions, versions, strict=True)
    ]


def active_heads(
    memory: Any, entries: list[Entry], revisions: list[Revision], versions: list[EntryVersion]
) -> list[Head]:
    """The unsaved heads of freshly added entries: active at version 1 from their revision's
    time on."""
    return [
        Head(
            entry=e,
            memory=memory,
            version=v,
            state="active",
            revision=rev,
            interval_started_at=rev.recorded_at,
        )
        for e, rev, v in zip(entries, revisions, versions, strict=True)
    ]


def declared_source(
    name: str, authority: str = "repository_attested", verification: str = "verified"
) -> Cite:
    """The bench source ``name`` and its first declaration (made once per database)."""
    src, _ = Source.objects.get_or_create(name=name)
    decl = SourceDeclaration.objects.filter(source=src).first()
    if decl is None:
        decl = SourceDeclaration.objects.create(
            source=src, version=1, authority=authority, verification=verification
        )
    return src, decl


class BulkCreate:
    """Inserts each batch through the ORM (``bulk_create``): the SQLite path."""

    def add(self, model: type[models.Model], objs: list[Any]) -> list[Any]:
        return model._default_manager.bulk_create(objs)

    def flush(self) -> None:
        pass


class Copy:
    """PostgreSQL: the same model instances, loaded with ``COPY`` (psycopg 3) once a batch is
    complete. Rows other rows point at get their primary keys from the table's own sequence
    first; the others take the column default, as ``bulk_create`` leaves them to."""

    REFERENCED = (Entry, Revision, EntryVersion)

    def __init__(self) -> None:
        self.pending: list[tuple[type[models.Model], list[Any]]] = []

    def add(self, model: type[models.Model], objs: list[Any]) -> list[Any]:
        if not objs:
            return objs
        if model in self.REFERENCED:
            table = model._meta.db_table
            pk = model._meta.pk
            assert pk is not None
            with connection.cursor() as c:
                c.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                    [table, pk.column, len(objs)],
                )
                ids = sorted(row[0] for row in c.fetchall())
            for obj, pk_value in zip(objs, ids, strict=True):
                obj.pk = pk_value
        self.pending.append((model, objs))
        return objs

    def flush(self) -> None:
        for model, objs in self.pending:
            copy_rows(model, objs)
        self.pending.clear()


def load_adds(
    loader: BulkCreate | Copy,
    memory: Any,
    entries: list[Entry],
    revisions: list[Revision],
    bodies: list[str],
    cites: list[Cite | None],
    effective: Sequence[datetime | None] | None = None,
    observed: Sequence[datetime | None] | None = None,
) -> None:
    """The rest of what the add action writes for ``entries`` (loaded) added by ``revisions``
    (loaded): per entry its version 1 with ``bodies``' text and ``effective`` time, the evidence
    of the source it ``cites`` (if any) observed at its ``observed`` time, the change, the head,
    then the projection derived from them."""
    effective = effective or [None] * len(entries)
    observed = observed or [None] * len(entries)
    versions = loader.add(
        EntryVersion,
        [
            first_version(memory, e, rev, body, cite[0].name if cite else None, eff)
            for e, rev, body, cite, eff in zip(
                entries, revisions, bodies, cites, effective, strict=True
            )
        ],
    )
    loader.add(
        Evidence,
        [
            cited_evidence(v, *cite, observed_at=at)
            for v, cite, at in zip(versions, cites, observed, strict=True)
            if cite
        ],
    )
    # The term statistics the lexical channel ranks by, as the writer keeps them.
    record_versions(memory.pk, [(v.searchable_text, v.term_count) for v in versions])
    loader.add(RevisionChange, add_changes(entries, revisions, versions))
    loader.add(Head, active_heads(memory, entries, revisions, versions))
    loader.flush()
    loader.add(LifecycleProjection, lifecycle.derive([e.pk for e in entries]))
    loader.flush()


def _db_value(field: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.JSONField):
        return json.dumps(value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


def copy_rows(model: type[models.Model], objs: list[Any]) -> None:
    """``COPY`` model instances into their table: every concrete column, the primary key
    only when it is set (else the column default numbers the rows)."""
    fields = [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and isinstance(f, models.AutoField) and objs[0].pk is None)
    ]
    quote = connection.ops.quote_name
    sql = (
        f"COPY {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        "FROM STDIN"
    )
    with connection.cursor() as c, c.cursor.copy(sql) as copy:
        for obj in objs:
            copy.write_row([_db_value(f, getattr(obj, f.attname)) for f in fields])
