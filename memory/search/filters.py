"""Scoped recall: the ``filters`` of search and the Context Pack (API.md "Recall").

A filter narrows the rows a channel may rank, inside the channel's own query — exactly like the
validity filter and the caller's clearance — so an entry filtered out never takes a place in a
channel's candidates, in fusion or in the coarse pool (DESIGN.md §6). Every key is optional and
the keys combine with AND; the values of one list key combine with OR:

- ``session_id``: the entry's session;
- ``kinds`` / ``tiers``: the entry's kind / tier is one of them;
- ``effective_after`` (inclusive) / ``effective_before`` (exclusive): the entry's effective time
  — the lifecycle projection's ``effective_at`` (DESIGN.md §5: the version's own time, else the
  latest ``observed_at`` of its evidence); in the history view a replaced version's time by the
  same rule over that version (its own ``effective_at``, else its own evidence's latest
  ``observed_at``), as its hit shows it. Unknown time never falls inside a time range;
- ``sources``: the version cites at least one of the named sources in its evidence (a name that
  is not registered matches nothing);
- ``fresh_at`` (the request's ``strict_fresh``, at the time of the request): the entry is not due
  for re-checking — its head's ``review_at`` is unset or later (``memory.revalidation``). The
  review date is the entry's, so in the history view every version of a due entry stays out.

Both channels read the same definitions: :meth:`RecallFilters.sql` for the lexical channel's raw
SQL, :meth:`RecallFilters.apply` for the vector channel's queryset, so SQLite and PostgreSQL —
and sqlite-vec, pgvector and the scan — keep the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import (
    Case,
    DateTimeField,
    Exists,
    F,
    Max,
    OuterRef,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.functions import Coalesce

from ..models import Entry, Evidence, Head, Source

#: The public keys of ``filters`` (API.md), in the order messages list them.
FILTER_KEYS = ("session_id", "kind", "tier", "effective_after", "effective_before", "source")


@dataclass(frozen=True)
class RecallFilters:
    """What a recall is scoped to (None / empty: not scoped by that key)."""

    session_id: str | None = None
    kinds: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    effective_after: datetime | None = None
    effective_before: datetime | None = None
    sources: tuple[str, ...] = ()
    fresh_at: datetime | None = None

    @classmethod
    def from_request(
        cls, data: Mapping[str, Any] | None, *, fresh_at: datetime | None = None
    ) -> RecallFilters | None:
        """The filters of a validated request body's ``filters`` object (keys of
        :data:`FILTER_KEYS`) and its ``strict_fresh`` (``fresh_at``: the request's time, or
        None); None when they scope nothing."""
        if not data:
            return cls(fresh_at=fresh_at) if fresh_at is not None else None
        filters = cls(
            fresh_at=fresh_at,
            session_id=data.get("session_id"),
            kinds=tuple(dict.fromkeys(data.get("kind") or ())),
            tiers=tuple(dict.fromkeys(data.get("tier") or ())),
            effective_after=data.get("effective_after"),
            effective_before=data.get("effective_before"),
            sources=tuple(dict.fromkeys(data.get("source") or ())),
        )
        return filters if filters.active else None

    @property
    def active(self) -> bool:
        return bool(
            self.session_id is not None
            or self.kinds
            or self.tiers
            or self.timed
            or self.sources
            or self.fresh_at is not None
        )

    @property
    def timed(self) -> bool:
        return self.effective_after is not None or self.effective_before is not None

    @property
    def on_entry(self) -> bool:
        """Whether a condition reads the entry row (session, kind, tier)."""
        return self.session_id is not None or bool(self.kinds or self.tiers)

    def as_dict(self) -> dict[str, Any]:
        """The filters as the request named them (the ranking trace reports them)."""
        out: dict[str, Any] = {}
        if self.session_id is not None:
            out["session_id"] = self.session_id
        if self.kinds:
            out["kind"] = list(self.kinds)
        if self.tiers:
            out["tier"] = list(self.tiers)
        if self.effective_after is not None:
            out["effective_after"] = self.effective_after.isoformat()
        if self.effective_before is not None:
            out["effective_before"] = self.effective_before.isoformat()
        if self.sources:
            out["source"] = list(self.sources)
        if self.fresh_at is not None:
            out["strict_fresh"] = True
        return out

    # --- The lexical channel: raw SQL over ``v`` (the version) and ``p`` (its projection) -----

    def sql(self, *, history: bool) -> tuple[str, list[str], list[Any]]:
        """Joins, conditions and parameters for a query over ``memory_entryversion v`` that has
        joined the entry's projection as ``p`` when :attr:`timed` (the caller's join).
        ``history``: the rows may be versions that are no longer their entry's head."""
        joins = ""
        where: list[str] = []
        params: list[Any] = []
        if self.on_entry:
            joins += f" JOIN {Entry._meta.db_table} fe ON fe.id = v.entry_id"
        if self.session_id is not None:
            where.append("fe.session_id = %s")
            params.append(self.session_id)
        for column, values in (("kind", self.kinds), ("tier", self.tiers)):
            if values:
                where.append(f"fe.{column} IN ({_marks(values)})")
                params += list(values)
        if self.timed:
            # A head version's time is its projection's; a replaced one's is its own.
            at = (
                "(CASE WHEN p.version_id = v.id THEN p.effective_at ELSE COALESCE(v.effective_at, "
                f"(SELECT MAX(fo.observed_at) FROM {Evidence._meta.db_table} fo "
                "WHERE fo.version_id = v.id)) END)"
                if history
                else "p.effective_at"
            )
            if self.effective_after is not None:
                where.append(f"{at} >= %s")
                params.append(_db_datetime(self.effective_after))
            if self.effective_before is not None:
                where.append(f"{at} < %s")
                params.append(_db_datetime(self.effective_before))
        if self.sources:
            where.append(
                f"EXISTS (SELECT 1 FROM {Evidence._meta.db_table} fev "
                f"JOIN {Source._meta.db_table} fs ON fs.id = fev.source_id "
                f"WHERE fev.version_id = v.id AND fs.name IN ({_marks(self.sources)}))"
            )
            params += list(self.sources)
        if self.fresh_at is not None:
            where.append(
                f"NOT EXISTS (SELECT 1 FROM {Head._meta.db_table} fh "
                "WHERE fh.entry_id = v.entry_id AND fh.review_at <= %s)"
            )
            params.append(_db_datetime(self.fresh_at))
        return joins, where, params

    # --- The vector channel: the same conditions on a queryset of versions --------------------

    def apply(self, qs: QuerySet[Any], *, history: bool) -> QuerySet[Any]:
        """``qs`` (entry versions) narrowed by the filters, as :meth:`sql` narrows the rows."""
        if self.session_id is not None:
            qs = qs.filter(entry__session_id=self.session_id)
        if self.kinds:
            qs = qs.filter(entry__kind__in=self.kinds)
        if self.tiers:
            qs = qs.filter(entry__tier__in=self.tiers)
        if self.timed:
            at = "entry__projection__effective_at"
            if history:
                observed = (
                    Evidence.objects.filter(version_id=OuterRef("pk"))
                    .values("version_id")
                    .annotate(latest=Max("observed_at"))
                    .values("latest")[:1]
                )
                qs = qs.annotate(
                    filter_effective_at=Case(
                        When(entry__projection__version_id=F("pk"), then=F(at)),
                        default=Coalesce(
                            F("effective_at"), Subquery(observed), output_field=DateTimeField()
                        ),
                    )
                )
                at = "filter_effective_at"
            if self.effective_after is not None:
                qs = qs.filter(**{f"{at}__gte": self.effective_after})
            if self.effective_before is not None:
                qs = qs.filter(**{f"{at}__lt": self.effective_before})
        if self.sources:
            cites = Evidence.objects.filter(
                version_id=OuterRef("pk"), source__name__in=self.sources
            )
            qs = qs.filter(Exists(cites))
        if self.fresh_at is not None:
            due = Head.objects.filter(entry_id=OuterRef("entry_id"), review_at__lte=self.fresh_at)
            qs = qs.filter(~Exists(due))
        return qs


def _marks(values: Sequence[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _db_datetime(value: datetime) -> Any:
    """A datetime as the backend stores it (SQLite compares the stored text: naive UTC)."""
    return connection.ops.adapt_datetimefield_value(value)
