"""REST endpoints of the memory core. Views translate: parse, scope, call one action or
selector, respond with a presenter (:mod:`memory.presenters`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import parse, parse_query
from lib.errors import NotFound, ValidationFailed
from lib.pagination import keyset_page
from lib.schema import limit_parameter

from .. import actions, presenters, selectors
from ..actors import Actor
from ..models import EntryQuerySet, HeadState
from ..permissions import require_reviewer, require_writer
from ..serializers import (
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
)
from .base import MemoryApiView

TAG_MEM = ["memories"]
TAG_ENTRIES = ["entries"]
TAG_REV = ["revisions"]


# --- Memories and sources -------------------------------------------------------------------


class MemoryCreateApi(MemoryApiView):
    @extend_schema(tags=TAG_MEM, request=MemoryCreateIn, summary="Create a Memory")
    def post(self, request: Request) -> Response:
        data = parse(MemoryCreateIn, request)
        memory = actions.create_memory(actor=self.actor(request), **data)
        return Response(presenters.memory_out(memory), status=status.HTTP_201_CREATED)


class MemoryDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_MEM, summary="Read a Memory")
    def get(self, request: Request, slug: str) -> Response:
        memory = selectors.get_memory(self.actor(request), slug)
        return Response(presenters.memory_out(memory))

    @extend_schema(tags=TAG_MEM, request=MemoryPatchIn, summary="Change a Memory's policy")
    def patch(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        data = parse(MemoryPatchIn, request)
        memory = actions.update_memory_policy(memory, actor=actor, policy=data["policy"])
        return Response(presenters.memory_out(memory))


class SourceCreateApi(MemoryApiView):
    @extend_schema(tags=["sources"], request=SourceCreateIn, summary="Register a source")
    def post(self, request: Request) -> Response:
        data = parse(SourceCreateIn, request)
        source = actions.register_source(actor=self.actor(request), **data)
        return Response(
            presenters.source_out(source, list(source.declarations.order_by("version"))),
            status=status.HTTP_201_CREATED,
        )


class SourceDetailApi(MemoryApiView):
    @extend_schema(tags=["sources"], summary="Read a source and its declaration history")
    def get(self, request: Request, name: str) -> Response:
        self.actor(request)
        source = selectors.get_source(name)
        declarations = sorted(source.declarations.all(), key=lambda d: d.version)
        return Response(presenters.source_out(source, declarations))


class SourceDeclareApi(MemoryApiView):
    @extend_schema(tags=["sources"], request=DeclarationIn, summary="Append a declaration version")
    def post(self, request: Request, name: str) -> Response:
        actor = self.actor(request)
        source = selectors.get_source(name)
        data = parse(DeclarationIn, request)
        declaration = actions.Declaration(
            authority=data["authority"], verification=data["verification"]
        )
        decl = actions.declare_source(source, actor=actor, declaration=declaration)
        return Response(presenters.declared_out(source, decl), status=status.HTTP_201_CREATED)


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
        qs = selectors.entries(
            actor,
            memory,
            state=filters.get("state", ""),
            kind=filters.get("kind", ""),
            tier=filters.get("tier", ""),
            validity=filters.get("validity", ""),
        )
        rows, cursor = keyset_page(qs, request.query_params, load=EntryQuerySet.with_detail)
        items = [presenters.entry_detail_out(e) for e in rows]
        return Response({"items": items, "next_cursor": cursor})

    @extend_schema(tags=TAG_ENTRIES, request=EntryCreateIn, summary="Remember (add an entry)")
    def post(self, request: Request, slug: str) -> Response:
        actor, memory = self.scope(request, slug)
        require_writer(actor)
        data = parse(EntryCreateIn, request)
        result = actions.add_entry(memory, actor=actor, **data)
        return Response(presenters.entry_added_out(result), status=201 if result.created else 200)


class EntryDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="Read an entry with its lifecycle annotation")
    def get(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        entry = selectors.get_entry_detail(actor, memory, entry_id)
        return Response(presenters.entry_detail_out(entry))


class EntryReviseApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, request=EntryReviseIn, summary="Revise an entry")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        data = parse(EntryReviseIn, request)
        result = actions.revise_entry(memory, actor=actor, entry_uid=entry_id, **data)
        changed = result.revision is not None
        return Response(presenters.entry_revised_out(result), status=201 if changed else 200)


def _reviewers(what: str) -> Callable[[Actor], None]:
    return lambda actor: require_reviewer(actor, what)


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
            request, slug, entry_id, ReasonIn, actions.forget_entry, require_writer
        )
        return Response(presenters.entry_forgotten_out(result))


class EntryReactivateApi(EntryStateApi):
    @extend_schema(tags=TAG_ENTRIES, request=OptionalReasonIn, summary="Reactivate an entry")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, _ = self.write(
            request,
            slug,
            entry_id,
            OptionalReasonIn,
            actions.reactivate_entry,
            require_writer,
        )
        return Response(presenters.entry_reactivated_out(result))


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
        return Response(presenters.write_result_out(result))


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
        return Response(presenters.entry_released_out(result))


class EntryPinApi(EntryStateApi):
    @extend_schema(tags=TAG_ENTRIES, request=PinIn, summary="Pin or unpin an entry (reviewers)")
    def post(self, request: Request, slug: str, entry_id: str) -> Response:
        result, data = self.write(
            request, slug, entry_id, PinIn, actions.pin_entry, _reviewers("pin")
        )
        return Response(presenters.entry_pinned_out(result, pinned=data["pinned"]))


class EntryVersionsApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="All versions of an entry, oldest first")
    def get(self, request: Request, slug: str, entry_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        history = selectors.entry_history(actor, memory, entry_id)
        return Response(presenters.entry_versions_out(history))


class EntryVersionDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, summary="One exact historical version")
    def get(self, request: Request, slug: str, entry_id: str, number: int) -> Response:
        actor, memory = self.scope(request, slug)
        history = selectors.entry_history(actor, memory, entry_id)
        versions = [v for v in history.versions if v.number in (number, number + 1)]
        found = [v for v in versions if v.number == number]
        if not found:
            raise NotFound(f"Entry '{history.entry.uid}' has no version {number}.")
        successor = next((v for v in versions if v.number == number + 1), None)
        version = presenters.version_out(found[0], history.head, successor)
        return Response({"entry_id": history.entry.uid, **version})


class SessionEndApi(MemoryApiView):
    @extend_schema(tags=TAG_ENTRIES, request=None, summary="End a session")
    def post(self, request: Request, slug: str, session_id: str) -> Response:
        actor, memory = self.scope(request, slug)
        parse(NoFieldsIn, request)
        result = actions.end_session(memory, actor=actor, session_id=session_id)
        return Response(presenters.session_ended_out(session_id, result.revision, result.retired))


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
        return Response(presenters.relation_out(relation), status=status.HTTP_201_CREATED)


# --- Revisions ------------------------------------------------------------------------------


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
        rows = list(
            selectors.revisions(memory).filter(number__gt=since).order_by("number")[: limit + 1]
        )
        more = len(rows) > limit
        rows = rows[:limit]
        return Response(
            {
                "head": memory.head,
                "items": [presenters.revision_out(r, actor) for r in rows],
                "next_since_revision": rows[-1].number if more else None,
            }
        )


class RevisionDetailApi(MemoryApiView):
    @extend_schema(tags=TAG_REV, summary="One revision with its changes")
    def get(self, request: Request, slug: str, number: int) -> Response:
        actor, memory = self.scope(request, slug)
        revision = selectors.get_revision(memory, number)
        return Response(presenters.revision_out(revision, actor))


class UnprocessableRevision(ValidationFailed):
    """since_revision beyond the head: the caller's view of the Memory is from the future."""

    code = "invalid"
    http_status = 422
