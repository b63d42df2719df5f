"""REST endpoints of the memory core. Views translate: parse, scope, call one action, respond."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import parse, parse_query
from lib.errors import NotFound, ValidationFailed
from lib.pagination import keyset_page
from lib.schema import limit_parameter

from . import actions
from .actors import Actor
from .api_base import MemoryApiView
from .models import (
    Entry,
    EntryQuerySet,
    EntryVersion,
    Evidence,
    Head,
    HeadState,
    Memory,
    Revision,
    RevisionChange,
    Source,
)
from .serializers import (
    DeclarationIn,
    EntryCreateIn,
    EntryListQuery,
    EntryReviseIn,
    MemoryCreateIn,
    MemoryPatchIn,
    NoFieldsIn,
    OptionalReasonIn,
    PinIn,
    ReasonIn,
    RelationIn,
    RevisionListQuery,
    SourceCreateIn,
    entry_out,
    memory_out,
    revision_out,
    source_out,
    version_out,
)

TAG_MEM = ["memories"]
TAG_ENTRIES = ["entries"]
TAG_REV = ["revisions"]


def write_result_out(result: actions.WriteResult) -> dict[str, Any]:
    body: dict[str, Any] = {
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


def entry_revised_out(result: actions.WriteResult) -> dict[str, Any]:
    """The body of a revise (``POST …/revise`` and the MCP ``revise`` tool): ``revised`` says
    whether a new version was written (false: the no-op, with its ``reason``). A revise never
    creates an entry, so it carries no ``created``."""
    body = write_result_out(result)
    del body["created"]
    return {**body, "revised": result.revision is not None}


def entry_added_out(result: actions.WriteResult) -> dict[str, Any]:
    """The body of "remember" (``POST …/entries`` and the MCP ``remember`` tool)."""
    body = write_result_out(result)
    body["near_duplicates"] = result.near_duplicates
    if result.proposal_id is not None:
        body["proposal"] = result.proposal_id
    return body


# --- Memories and sources -------------------------------------------------------------------


class MemoryCreateApi(MemoryApiView):
    @extend_schema(tags=TAG_MEM, request=MemoryCreateIn, summary="Create a Memory")
    def post(self, request: Request) -> Response:
        data = parse(MemoryCreateIn, request)
        memory = actions.create_memory(actor=self.actor(request), **data)
        return Response(memory_out(memory), status=status.HTTP_201_CREATED)


class MemoryDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_MEM, summary="Read a Memory")
    def get(self, request: Request, slug: str) -> Response:
        memory = actions.get_memory(self.actor(request), slug)
        return Response(memory_out(memory))

    @extend_schema(tags=TAG_MEM, request=MemoryPatchIn, summary="Change a Memory's policy")
    def patch(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        data = parse(MemoryPatchIn, request)
        memory = actions.update_memory_policy(memory, actor=actor, policy=data["policy"])
        return Response(memory_out(memory))


def _source_or_404(name: str) -> Source:
    source = Source.objects.filter(name=name).prefetch_related("declarations").first()
    if source is None:
        raise NotFound(f"No source '{name}'.")
    return source


class SourceCreateApi(MemoryApiView):
    @extend_schema(tags=["sources"], request=SourceCreateIn, summary="Register a source")
    def post(self, request: Request) -> Response:
        data = parse(SourceCreateIn, request)
        source = actions.register_source(actor=self.actor(request), **data)
        return Response(
            source_out(source, list(source.declarations.order_by("version"))),
            status=status.HTTP_201_CREATED,
        )


class SourceDetailApi(MemoryApiView):
    @extend_schema(tags=["sources"], summary="Read a source and its declaration history")
    def get(self, request: Request, name: str) -> Response:
        self.actor(request)
        source = _source_or_404(name)
        return Response(
            source_out(source, sorted(source.declarations.all(), key=lambda d: d.version))
        )


class SourceDeclareApi(MemoryApiView):
    @extend_schema(tags=["sources"], request=DeclarationIn, summary="Append a declaration version")
    def post(self, request: Request, name: str) -> Response:
        actor = self.actor(request)
        source = _source_or_404(name)
        data = parse(DeclarationIn, request)
        declaration = actions.Declaration(
            authority=data["authority"], verification=data["verification"]
        )
        decl = actions.declare_source(source, actor=actor, declaration=declaration)
        return Response(
            {
                "name": source.name,
                "declaration_version": decl.version,
                "authority": decl.authority,
                "verification": decl.verification,
            },
            status=status.HTTP_201_CREATED,
        )


# --- Entries --------------------------------------------------------------------------------


class EntryListCreateApi(MemoryApiView):
    @extend_schema(
        tags=TAG_ENTRIES,
        summary="List entries (cursor pagination)",
        parameters=[
            OpenApiParameter("state", str, enum=list(HeadState.values)),
            OpenApiParameter("kind", str),
            OpenApiParameter("tier", str),
            OpenApiParameter("validity", str),
            OpenApiParameter("cursor", str),
            limit_parameter(),
        ],
    )
    def get(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        filters = parse_query(EntryListQuery, request)
        qs = Entry.objects.for_memory(memory).visible_to(actor)
        if "state" in filters:
            qs = qs.filter(head__state=filters["state"])
        if "kind" in filters:
            qs = qs.filter(kind=filters["kind"])
        if "tier" in filters:
            qs = qs.filter(tier=filters["tier"])
        if "validity" in filters:
            # The projection's own Memory too: its (memory, validity) index finds a rare value.
            qs = qs.filter(
                projection__memory_id=memory.pk, projection__validity=filters["validity"]
            )
        rows, cursor = keyset_page(qs, request.query_params, load=EntryQuerySet.with_detail)
        items = [entry_out(e, e.head, getattr(e, "projection", None)) for e in rows]
        return Response({"items": items, "next_cursor": cursor})

    @extend_schema(tags=TAG_ENTRIES, request=EntryCreateIn, summary="Remember (add an entry)")
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        actions.require_writer(actor)
        data = parse(EntryCreateIn, request)
        result = actions.add_entry(memory, actor=actor, **data)
        return Response(entry_added_out(result), status=201 if result.created else 200)


def _entry_detail(actor: Actor, memory: Memory, uid: str) -> Entry:
    entry = Entry.objects.for_memory(memory).visible_to(actor).with_detail().filter(uid=uid).first()
    if entry is None:
        raise NotFound(f"No entry '{uid}' in memory '{memory.slug}'.")
    return entry


class EntryDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="Read an entry with its lifecycle annotation")
    def get(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        entry = _entry_detail(actor, memory, entry_id)
        body = entry_out(entry, entry.head, getattr(entry, "projection", None))
        return Response(body)


class EntryReviseApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, request=EntryReviseIn, summary="Revise an entry")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        data = parse(EntryReviseIn, request)
        result = actions.revise_entry(memory, actor=actor, entry_uid=entry_id, **data)
        changed = result.revision is not None
        return Response(entry_revised_out(result), status=201 if changed else 200)


def _reviewers(what: str) -> Callable[[Actor], None]:
    return lambda actor: actions.require_reviewer(actor, what)


class EntryStateApi(MemoryApiView):
    """The endpoints that change one entry's state (forget, reactivate, quarantine, release,
    pin): each parses its body and calls its action on the entry named in the URL."""

    def write(
        self,
        request: Request,
        slug: str,
        entry_id: str,
        body: type[Any],
        action: Callable[..., actions.WriteResult],
        require: Callable[[Actor], None],
    ) -> tuple[actions.WriteResult, dict[str, Any]]:
        """The Memory's scope (404), then the caller's role, before the body is parsed: a
        request the role may never make is 403, whatever fields it sent."""
        actor, memory = self.scope(request, slug)
        require(actor)
        data = parse(body, request)
        return action(memory, actor=actor, entry_uid=entry_id, **data), data


class EntryForgetApi(EntryStateApi):
    @extend_schema(tags=TAG_ENTRIES, request=ReasonIn, summary="Forget (retire) an entry")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, _ = self.write(
            request, slug, entry_id, ReasonIn, actions.forget_entry, actions.require_writer
        )
        return Response(write_result_out(result) | {"state": "inactive"})


class EntryReactivateApi(EntryStateApi):
    @extend_schema(tags=TAG_ENTRIES, request=OptionalReasonIn, summary="Reactivate an entry")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, _ = self.write(
            request,
            slug,
            entry_id,
            OptionalReasonIn,
            actions.reactivate_entry,
            actions.require_writer,
        )
        return Response(write_result_out(result) | {"state": "active"})


class EntryQuarantineApi(EntryStateApi):
    @extend_schema(
        tags=TAG_ENTRIES,
        request=ReasonIn,
        summary="Quarantine an entry (reviewers): withheld from every recall view",
    )
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, _ = self.write(
            request, slug, entry_id, ReasonIn, actions.quarantine_entry, _reviewers("quarantine")
        )
        return Response(write_result_out(result))


class EntryReleaseApi(EntryStateApi):
    @extend_schema(
        tags=TAG_ENTRIES,
        request=ReasonIn,
        summary="Release a quarantined entry (reviewers) to the state it had before",
    )
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, _ = self.write(
            request, slug, entry_id, ReasonIn, actions.release_entry, _reviewers("release")
        )
        body = write_result_out(result)
        if result.proposal_id is not None:
            body["proposal"] = result.proposal_id
        return Response(body)


class EntryPinApi(EntryStateApi):
    @extend_schema(tags=TAG_ENTRIES, request=PinIn, summary="Pin or unpin an entry (reviewers)")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, data = self.write(
            request, slug, entry_id, PinIn, actions.pin_entry, _reviewers("pin")
        )
        return Response(write_result_out(result) | {"pinned": data["pinned"]})


def versions_of(entry: Entry) -> list[EntryVersion]:
    """Every version of ``entry``, oldest first, with its revision and evidence (three queries
    however long the history)."""
    return list(
        EntryVersion.objects.filter(entry=entry)
        .select_related("revision")
        .prefetch_related(
            Prefetch(
                "evidence", queryset=Evidence.objects.select_related("source").order_by("position")
            )
        )
        .order_by("number")
    )


def entry_versions_out(actor: Actor, memory: Memory, entry_uid: str) -> dict[str, Any]:
    """The body of "entry history" (``GET …/entries/{id}/versions`` and the MCP
    ``entry_history`` tool): the entry's state and every version, oldest first."""
    entry = actions.get_entry(actor, memory, entry_uid)
    head = Head.objects.get(entry=entry)
    versions = versions_of(entry)
    items = [
        version_out(v, head, versions[i + 1] if i + 1 < len(versions) else None)
        for i, v in enumerate(versions)
    ]
    return {"entry_id": entry.uid, "state": head.state, "items": items}


class EntryVersionsApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="All versions of an entry, oldest first")
    def get(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        return Response(entry_versions_out(actor, memory, entry_id))


class EntryVersionDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="One exact historical version")
    def get(self, request: Request, slug: str, entry_id: str, number: int) -> Response:
        actor, memory = self.scope(request, slug)
        entry = actions.get_entry(actor, memory, entry_id)
        head = Head.objects.get(entry=entry)
        versions = [v for v in versions_of(entry) if v.number in (number, number + 1)]
        found = [v for v in versions if v.number == number]
        if not found:
            raise NotFound(f"Entry '{entry.uid}' has no version {number}.")
        successor = next((v for v in versions if v.number == number + 1), None)
        body = {"entry_id": entry.uid, **version_out(found[0], head, successor)}
        return Response(body)


class SessionEndApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, request=None, summary="End a session")
    def post(self, request: Request, slug: str, session_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        parse(NoFieldsIn, request)
        result = actions.end_session(memory, actor=actor, session_id=session_id)
        return Response(
            {
                "session_id": session_id,
                "revision": result.revision.number if result.revision else None,
                "retired": result.retired,
            }
        )


class RelationCreateApi(MemoryApiView):
    @extend_schema(
        tags=TAG_ENTRIES, request=RelationIn, summary="Record a conflicts_with observation"
    )
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        data = parse(RelationIn, request)
        relation = actions.record_conflict(
            memory,
            actor=actor,
            from_entry=data["from_entry"],
            to_entry=data["to_entry"],
            evidence=data.get("evidence"),
        )
        return Response(
            {
                "id": relation.pk,
                "kind": relation.kind,
                "from_entry": relation.from_entry.uid,
                "to_entry": relation.to_entry.uid,
                "authoritative": relation.authoritative,
            },
            status=status.HTTP_201_CREATED,
        )


# --- Revisions ------------------------------------------------------------------------------


def _revisions(memory: Memory) -> Any:
    return Revision.objects.filter(memory=memory).prefetch_related(
        Prefetch(
            "changes",
            queryset=RevisionChange.objects.select_related(
                "entry", "from_version", "to_version"
            ).order_by("id"),
        )
    )


class RevisionListApi(MemoryApiView):
    @extend_schema(
        tags=TAG_REV,
        summary="Revisions after since_revision (exclusive), ascending",
        parameters=[
            OpenApiParameter("since_revision", {"type": "integer", "minimum": 0}),
            limit_parameter(500),
        ],
    )
    def get(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        query = parse_query(RevisionListQuery, request)
        since = query["since_revision"]
        limit = query.get("limit") or 100
        if since > memory.head:
            raise UnprocessableRevision(
                f"since_revision {since} is above the memory's head ({memory.head}).",
                details={"since_revision": since, "head": memory.head},
            )
        rows = list(_revisions(memory).filter(number__gt=since).order_by("number")[: limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        return Response(
            {
                "head": memory.head,
                "items": [revision_out(r, actor) for r in rows],
                "next_since_revision": rows[-1].number if more else None,
            }
        )


class RevisionDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_REV, summary="One revision with its changes")
    def get(self, request: Request, slug: str, number: int) -> Response:
        actor, memory = self.scope(request, slug)
        revision = _revisions(memory).filter(number=number).first()
        if revision is None:
            raise NotFound(f"No revision {number} in memory '{memory.slug}'.")
        return Response(revision_out(revision, actor))


class UnprocessableRevision(ValidationFailed):
    """since_revision beyond the head: the caller's view of the Memory is from the future."""

    code = "invalid"
    http_status = 422
