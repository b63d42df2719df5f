"""Every output shape of the memory core: Memories, sources, entries, versions, revisions, the
results of writes, recall hits and Context Packs.

One function per shape, shared by the REST views, the MCP tools and the pages, so the structured
result of a tool is the body of the REST response. A presenter takes what was read or written
and shapes it: it does not read the database beyond the relations its argument was loaded with
(the selectors say what they load), it decides nothing, and it does not redact — every memory
REST response and every MCP tool result passes through ``memory.visibility.scrub`` once, at the
edge.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from .actions.common import WriteResult
from .actors import Actor
from .context_pack import ContextPack
from .models import (
    Authority,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    LifecycleProjection,
    Memory,
    Relation,
    Revision,
    Source,
    SourceDeclaration,
    Verification,
    sensitivities_up_to,
)
from .revalidation import is_due
from .search import Hit, SearchResult
from .selectors import History

#: A JSON object as a response (REST, MCP) carries it.
Body = dict[str, Any]

# --- Memories and sources --------------------------------------------------------------------


def memory_out(memory: Memory) -> Body:
    return {
        "slug": memory.slug,
        "name": memory.name,
        "policy": memory.policy,
        "head": memory.head,
        "created_at": memory.created_at,
    }


def declaration_out(decl: SourceDeclaration | None) -> Body:
    if decl is None:
        return {
            "authority": Authority.UNTRUSTED,
            "verification": Verification.UNKNOWN,
            "declaration_version": None,
        }
    return {
        "authority": decl.authority,
        "verification": decl.verification,
        "declaration_version": decl.version,
        "declared_at": decl.created_at,
    }


def source_out(source: Source, decls: list[SourceDeclaration]) -> Body:
    """A source and its declarations, oldest first (the last is in force)."""
    return {
        "name": source.name,
        "description": source.description,
        "declaration": declaration_out(decls[-1] if decls else None),
        "declarations": [declaration_out(d) for d in decls],
    }


def declared_out(source: Source, decl: SourceDeclaration) -> Body:
    """The body of a new declaration version (``POST /sources/{name}/declarations``)."""
    return {
        "name": source.name,
        "declaration_version": decl.version,
        "authority": decl.authority,
        "verification": decl.verification,
    }


# --- Entries and versions --------------------------------------------------------------------


def evidence_out(ev: Evidence) -> Body:
    return {
        "source": ev.source.name,
        "ref": ev.ref,
        "observed_at": ev.observed_at,
        "quote": ev.quote,
        "snapshot": {
            "authority": ev.authority,
            "verification": ev.verification,
            "declaration_version": ev.declaration_version,
        },
    }


def lifecycle_out(p: LifecycleProjection | None) -> Body | None:
    if p is None:
        return None
    return {
        "validity": p.validity,
        "validity_reason": p.validity_reason,
        "successor_entry": p.successor_entry.uid if p.successor_entry else None,
        "importance": p.importance,
        "evidence_strength": p.evidence_strength,
        "provenance": p.provenance,
        "recorded_at": p.recorded_at,
        "effective_at": p.effective_at,
        "time_known": p.time_known,
        "pinned": p.pinned,
        "pin_category": p.pin_category,
        "auto_action_reason": p.auto_action_reason,
        "interval_started_at": p.interval_started_at,
        # Folded from recall events (memory.recall_events) when the policy enables them.
        "recall_count": p.recall_count,
        "last_recalled_at": p.last_recalled_at,
    }


def governance_out(head: Head, now: datetime | None = None) -> Body:
    """An entry's governance fields (spec 004, ``memory.revalidation``) and whether it is due
    for re-checking at ``now``."""
    return {
        "owner": head.owner or None,
        "confidence": head.confidence,
        "review_at": head.review_at,
        "review_due": is_due(head.review_at, now or timezone.now()),
    }


def entry_out(entry: Entry, head: Head, projection: LifecycleProjection | None) -> Body:
    """An entry with its head version, evidence, governance fields and lifecycle annotation
    (``EntryQuerySet.with_detail`` loads what it reads)."""
    version = head.version
    return {
        "entry_id": entry.uid,
        "kind": entry.kind,
        "tier": entry.tier,
        "session_id": entry.session_id or None,
        "sensitivity": entry.sensitivity,
        "current_state": entry.current_state,
        "state": head.state,
        "state_reason": head.state_reason,
        "version": version.number,
        "content_hash": version.content_hash,
        "body": version.body,
        "evidence": [evidence_out(ev) for ev in version.evidence.all()],
        **governance_out(head),
        "lifecycle": lifecycle_out(projection),
    }


def entry_detail_out(entry: Entry) -> Body:
    """:func:`entry_out` of an entry loaded with its detail (head and projection joined)."""
    return entry_out(entry, entry.head, getattr(entry, "projection", None))


def version_out(version: EntryVersion, head: Head, successor: EntryVersion | None) -> Body:
    """One historical version with the lifecycle reason that applies to it."""
    if version.pk == head.version_id:
        status = head.state
        reason = head.state_reason
    else:
        status = "replaced"
        reason = f"replaced_by_version:{successor.number}" if successor else "replaced"
    return {
        "version": version.number,
        "body": version.body,
        "content_hash": version.content_hash,
        "predecessor": version.number - 1 if version.predecessor_id else None,
        "revision": version.revision.number,
        "recorded_at": version.revision.recorded_at,
        "effective_at": version.effective_at,
        "evidence": [evidence_out(ev) for ev in version.evidence.all()],
        "is_head": version.pk == head.version_id,
        "status": status,
        "lifecycle_reason": reason,
        "replaced_by_revision": successor.revision.number if successor else None,
    }


def entry_versions_out(history: History) -> Body:
    """The body of "entry history" (``GET …/entries/{id}/versions`` and the MCP
    ``entry_history`` tool): the entry's state and every version, oldest first."""
    versions, head = history.versions, history.head
    items = [
        version_out(v, head, versions[i + 1] if i + 1 < len(versions) else None)
        for i, v in enumerate(versions)
    ]
    return {"entry_id": history.entry.uid, "state": head.state, "items": items}


def relation_out(relation: Relation) -> Body:
    """A recorded relation (``POST …/relations``)."""
    return {
        "id": relation.pk,
        "kind": relation.kind,
        "from_entry": relation.from_entry.uid,
        "to_entry": relation.to_entry.uid,
        "authoritative": relation.authoritative,
    }


# --- Revisions -------------------------------------------------------------------------------

REDACTED_REASON = "(redacted: this revision touches entries above your clearance)"


def revision_out(rev: Revision, actor: Actor | None = None) -> Body:
    """A revision as ``actor`` may see it: changes to entries above its clearance are left out,
    and then the free-text reason (which may describe them) is redacted too."""
    visible = sensitivities_up_to(actor.clearance) if actor is not None else None
    changes = [ch for ch in rev.changes.all() if visible is None or ch.entry.sensitivity in visible]
    hidden = len(rev.changes.all()) - len(changes)
    return {
        "number": rev.number,
        "kind": rev.kind,
        "actor": {
            "type": rev.actor_type,
            "id": rev.actor_id,
            "label": rev.actor_label,
            "on_behalf_of": rev.on_behalf_of or None,
        },
        "reason": REDACTED_REASON if hidden else rev.reason,
        "recorded_at": rev.recorded_at,
        "correlation_id": rev.correlation_id,
        "proposal": rev.proposal_id,
        "operation": rev.operation_id,
        "changes": [
            {
                "entry_id": ch.entry.uid,
                "from_version": ch.from_version.number if ch.from_version else None,
                "to_version": ch.to_version.number,
                "from_state": ch.from_state or None,
                "to_state": ch.to_state,
                "state_reason": ch.state_reason,
                **({"attributes": ch.attributes} if ch.attributes else {}),
            }
            for ch in changes
        ],
        **({"hidden_changes": hidden} if hidden else {}),
    }


# --- The results of writes -------------------------------------------------------------------


def write_result_out(result: WriteResult) -> Body:
    """What a single-entry write did: the entry, its version and content hash after it,
    whether it created the entry, the revision (none for a no-op, with its ``reason``) and the
    head state when the action reports it."""
    body: Body = {
        "entry_id": result.entry.uid,
        "version": result.version.number,
        "content_hash": result.version.content_hash,
        "created": result.created,
    }
    if result.revision is not None:
        body["revision"] = result.revision.number
    if result.reason:
        body["reason"] = result.reason
    if result.state:
        body["state"] = result.state
    return body


def entry_added_out(result: WriteResult) -> Body:
    """The body of "remember" (``POST …/entries`` and the MCP ``remember`` tool)."""
    body = write_result_out(result)
    body["near_duplicates"] = result.near_duplicates
    if result.proposal_id is not None:
        body["proposal"] = result.proposal_id
    return body


def entry_revised_out(result: WriteResult) -> Body:
    """The body of a revise (``POST …/revise`` and the MCP ``revise`` tool): ``revised`` says
    whether a new version was written (false: the no-op, with its ``reason``). A revise never
    creates an entry, so it carries no ``created``."""
    body = write_result_out(result)
    del body["created"]
    return {**body, "revised": result.revision is not None}


def entry_forgotten_out(result: WriteResult) -> Body:
    """The body of a forget (``POST …/forget`` and the MCP ``forget`` tool)."""
    return write_result_out(result) | {"state": "inactive"}


def entry_reactivated_out(result: WriteResult) -> Body:
    return write_result_out(result) | {"state": "active"}


def entry_released_out(result: WriteResult) -> Body:
    """A release names the admission proposal it filed, if any."""
    body = write_result_out(result)
    if result.proposal_id is not None:
        body["proposal"] = result.proposal_id
    return body


def entry_pinned_out(result: WriteResult, *, pinned: bool) -> Body:
    return write_result_out(result) | {"pinned": pinned}


def confirm_out(result: WriteResult, head: Head) -> Body:
    """The body of ``confirm`` and ``require-reverification`` (REST and the MCP ``confirm``
    tool): the write's result and the entry's governance fields after it (``head``)."""
    return write_result_out(result) | governance_out(head)


def session_ended_out(session_id: str, revision: Revision | None, retired: list[str]) -> Body:
    """The body of ``POST …/sessions/{id}/end``."""
    return {
        "session_id": session_id,
        "revision": revision.number if revision else None,
        "retired": retired,
    }


# --- Recall ----------------------------------------------------------------------------------


def hit_out(hit: Hit) -> Body:
    """One recall hit with its provenance, governance fields and lifecycle annotation."""
    return {
        "entry_id": hit.entry_id,
        "version": hit.version,
        "body": hit.body,
        "score": hit.score,
        "channels": hit.channels,
        "kind": hit.kind,
        "tier": hit.tier,
        "session_id": hit.session_id,
        "effective_at": hit.effective_at,
        "recorded_at": hit.recorded_at,
        "provenance": hit.provenance,
        "owner": hit.owner,
        "confidence": hit.confidence,
        "review_at": hit.review_at,
        "review_due": hit.review_due,
        "lifecycle": hit.lifecycle(),
    }


def search_out(result: SearchResult, *, trace: bool = False) -> Body:
    """The body of recall (``POST …/search`` and the MCP ``recall`` tool): the hits, and the
    ranking trace when ``trace`` (the caller decides who may see it)."""
    body: Body = {"hits": [hit_out(h) for h in result.hits]}
    if trace:
        body["trace"] = result.trace.as_dict()
    return body


def context_pack_out(pack: ContextPack) -> Body:
    """The body of a Context Pack (``POST …/context-pack`` and the MCP ``context_pack`` tool)."""
    return {"text": pack.text, "items": [i.as_dict() for i in pack.items], "bytes": pack.bytes}
