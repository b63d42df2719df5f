"""Read model of the operation page: the record an approval produced (pre-state, relations,
entries created, what recall lost or gained) and what compensation would restore, with each
entry's text, in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.models import EntryVersion, Head

from .exposed import operation_exposure
from .links import entry_href, revision_href
from .models import MaintenanceOperation
from .selectors import irreversible_effects


@dataclass
class HeadRow:
    entry_id: str
    href: str
    role: str = ""
    version: int | None = None
    state: str = ""
    reason: str = ""
    after_version: int | None = None
    after_state: str = ""
    now_version: int | None = None
    now_state: str = ""
    #: The entry's text at the row's version (before), and after the operation when it changed.
    body: str = ""
    after_body: str = ""
    #: The relation the operation gave the entry when its head did not change ("superseded by
    #: e_…"): a supersession changes the old entry's validity, not its version.
    note: str = ""

    @property
    def head_unchanged(self) -> bool:
        """The operation left this entry's head as it was (same version and state)."""
        return self.after_version == self.version and self.after_state == self.state

    @property
    def moved_on(self) -> bool:
        """The entry's head is no longer what the operation produced."""
        return self.now_version is not None and (
            self.now_version != self.after_version or self.now_state != self.after_state
        )


@dataclass
class OperationPage:
    operation: MaintenanceOperation
    pre_state: list[HeadRow]
    restore: list[HeadRow]
    relations: list[dict[str, Any]]
    created: list[HeadRow]
    impact: dict[str, list[HeadRow]]
    revision_href: str
    compensation_href: str | None
    irreversible: list[str]
    moved: list[HeadRow]
    #: ``review.exposed.operation_exposure``: the retired versions and the runs served them.
    exposure: dict[str, Any]


@dataclass
class _Rows:
    """What the operation's rows are built from: each entry's head now, the state the operation
    left it in, the texts of the versions it names and the supersessions it recorded."""

    slug: str
    after: dict[str, dict[str, Any]]
    now: dict[str, Head]
    bodies: dict[tuple[str, Any], str]
    notes: dict[str, str]

    def text_of(self, uid: str) -> str:
        """The entry's text after the operation, else before it."""
        found = self.bodies.get((uid, (self.after.get(uid) or {}).get("version")))
        if found:
            return found
        return next((b for (u, _), b in self.bodies.items() if u == uid), "")

    def row(self, uid: str, **kw: Any) -> HeadRow:
        """The row of entry ``uid``: its head before (``kw`` overrides), after the operation and
        now, with the texts of those versions."""
        head = self.now.get(uid)
        want = self.after.get(uid) or {}
        version = kw.get("version", want.get("version"))
        after_body = self.bodies.get((uid, want.get("version")), "")
        body = self.bodies.get((uid, version), "") or after_body
        return HeadRow(
            entry_id=uid,
            href=entry_href(self.slug, uid),
            after_version=want.get("version"),
            after_state=want.get("state", ""),
            now_version=head.version.number if head else None,
            now_state=head.state if head else "",
            body=body,
            after_body=after_body if after_body != body else "",
            note=self.notes.get(uid, ""),
            **kw,
        )


def _rows_of(operation: MaintenanceOperation) -> _Rows:
    """Read what the operation's rows show (two queries): the current head of every entry it
    touched, and the text of every version its pre-state and result name."""
    slug = operation.memory.slug
    produced = operation.produced or {}
    after: dict[str, dict[str, Any]] = produced.get("heads") or {}
    uids = {str(u) for u in after} | {str(p.get("entry_id")) for p in operation.pre_state or []}
    now = {
        h.entry.uid: h
        # Entries by (memory, uid), their unique key: a uid alone is not indexed.
        for h in Head.objects.filter(
            memory=operation.memory,
            entry__memory=operation.memory,
            entry__uid__in=sorted(uids),
        )
        .select_related("entry", "version")
        .order_by("entry_id")
    }

    wanted = {(str(p.get("entry_id")), p.get("version")) for p in operation.pre_state or []}
    wanted |= {(str(u), h.get("version")) for u, h in after.items() if isinstance(h, dict)}
    bodies: dict[tuple[str, Any], str] = {
        (v.entry.uid, v.number): v.body
        for v in EntryVersion.objects.filter(
            memory=operation.memory,
            entry__memory=operation.memory,
            entry__uid__in=sorted({u for u, _ in wanted}),
            number__in=sorted({n for _, n in wanted if isinstance(n, int)}),
        ).select_related("entry")
    }
    notes = {
        str(r.get("to_entry")): f"superseded by {r.get('from_entry')}"
        for r in produced.get("relations", [])
        if r.get("kind") == "supersedes"
    }
    return _Rows(slug=slug, after=after, now=now, bodies=bodies, notes=notes)


def _pre_state(operation: MaintenanceOperation, rows: _Rows) -> list[HeadRow]:
    """The affected entries as they were before the operation."""
    return [
        rows.row(
            str(p["entry_id"]), role=p.get("role", ""), version=p.get("version"), state=p["state"]
        )
        for p in operation.pre_state or []
    ]


def _restore(operation: MaintenanceOperation, rows: _Rows) -> list[HeadRow]:
    """The heads compensation would restore, each with why."""
    return [
        rows.row(
            str(p["entry_id"]),
            version=p.get("version"),
            state=p.get("state", ""),
            reason=p.get("reason", ""),
        )
        for p in (operation.compensation_plan or {}).get("heads", [])
    ]


def _impact(operation: MaintenanceOperation, rows: _Rows) -> dict[str, list[HeadRow]]:
    """The entries that left current recall, came back in it at a new version, or joined it."""
    return {
        key: [rows.row(str(u)) for u in (operation.derived_view_impact or {}).get(key, [])]
        for key in ("leaves_current_recall", "new_version_in_recall", "joins_current_recall")
    }


def _relations(operation: MaintenanceOperation, rows: _Rows) -> list[dict[str, Any]]:
    """The relations the operation recorded, with links to and the texts of both entries."""
    slug = rows.slug
    return [
        {
            **r,
            "from_href": entry_href(slug, r["from_entry"]),
            "to_href": entry_href(slug, r["to_entry"]),
            "from_text": rows.text_of(str(r["from_entry"])),
            "to_text": rows.text_of(str(r["to_entry"])),
        }
        for r in (operation.produced or {}).get("relations", [])
    ]


def operation_page(operation: MaintenanceOperation) -> OperationPage:
    """What the operation page shows about ``operation``."""
    rows = _rows_of(operation)
    slug = rows.slug
    pre = _pre_state(operation, rows)
    restore = _restore(operation, rows)
    impact = _impact(operation, rows)
    relations = _relations(operation, rows)
    compensation = getattr(operation, "compensation", None)
    by_entry = {r.entry_id: r for r in [*pre, *restore]}
    return OperationPage(
        operation=operation,
        pre_state=pre,
        restore=restore,
        relations=relations,
        created=[rows.row(str(u)) for u in (operation.produced or {}).get("created_entries", [])],
        impact=impact,
        revision_href=revision_href(slug, operation.revision_number),
        compensation_href=(
            revision_href(slug, compensation.revision_number) if compensation else None
        ),
        irreversible=irreversible_effects(operation),
        moved=[r for r in by_entry.values() if r.moved_on] if compensation is None else [],
        exposure=operation_exposure(operation),
    )
