"""The MCP tools (API.md "MCP"): what each one takes, which action it calls, what it returns.

A tool translates exactly as its REST view does: its arguments are parsed by the REST input
serializer (with a ``memory`` argument where REST has the slug in the path), it calls the same
action, and its result is shaped by the same presenter, so the structured result of a tool is the
body of the REST response. Refusals are the same domain errors, turned into tool errors by
:mod:`agents.server`. Nothing here decides who may do what: the actions and selectors do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from rest_framework import serializers

from lib.api import StrictSerializer, validated
from lib.errors import ValidationFailed
from memory import actions, presenters, selectors
from memory.actions.batch import MAX_BATCH
from memory.actors import Actor
from memory.admission import clean_idempotency_key as clean_batch_key
from memory.models import Kind, Memory
from memory.permissions import require_confirmer, require_reader, require_writer
from memory.recall import serve_context_pack, serve_search
from memory.serializers import (
    VIEW_CHOICES,
    BatchEntryIn,
    ConfirmIn,
    ContextPackIn,
    EntryCreateIn,
    EntryReviseIn,
    ReasonIn,
    RunIdField,
    SearchIn,
    parse_entries,
)
from memory.visibility import scrub
from proposals import actions as proposal_actions
from proposals.actions.intake import clean_idempotency_key
from proposals.kinds import KINDS
from proposals.models import Proposal
from proposals.permissions import kinds_filed_by, require_submitter_of
from proposals.selectors import get_proposal, proposal_json, submitted_json
from proposals.serializers import (
    KIND_SERIALIZERS,
    AmendIn,
    AnchorIn,
    WithdrawIn,
    comment_out,
    parse_submission,
)
from review.exposed import FEED_LIMIT, FEED_MAX, retired_for

from .schema import serializer_schema

MEMORY_HELP = (
    "Slug of the Memory to use. May be left out when your API key is limited to exactly one "
    "Memory; required otherwise."
)


class MemoryArg(StrictSerializer):
    memory = serializers.CharField(max_length=64, required=False, help_text=MEMORY_HELP)


def memory_of(actor: Actor, slug: str | None) -> Memory:
    """The Memory a tool acts on: the named one (404 outside the key's scope), or the key's only
    Memory when it names none."""
    if slug:
        return selectors.get_memory(actor, slug)
    if actor.memory_ids is not None and len(actor.memory_ids) == 1:
        (only,) = actor.memory_ids
        found = Memory.objects.filter(pk=only).values_list("slug", flat=True).first()
        if found is not None:
            return selectors.get_memory(actor, found)
    raise ValidationFailed(
        details={"memory": ["Required: your key is not limited to exactly one Memory."]}
    )


# --- Inputs: the REST serializers, plus ``memory`` and the ids REST has in the path ------------


class RememberIn(MemoryArg, EntryCreateIn):
    # REST-only switches an agent has no use for over MCP.
    dedupe = None  # type: ignore[assignment]
    near_duplicate_of = None  # type: ignore[assignment]
    # One entry (``body`` and ``kind``) or many (``entries``, the batch add).
    body = serializers.CharField(trim_whitespace=False, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    entries = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text=(
            "Instead of one entry: up to 1000 objects with the fields of one (body, kind, "
            "tier, session_id, current_state, effective_at, sensitivity, evidence, owner, "
            "confidence, review_at), written all or nothing."
        ),
    )
    idempotency_key = serializers.CharField(
        required=False,
        max_length=128,
        help_text="With `entries`: send the same key with the same entries to retry safely.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "entries" in attrs:
            given = set(getattr(self, "initial_data", None) or ())
            single = sorted(given & set(BatchEntryIn().fields))
            if single:
                raise serializers.ValidationError(
                    {name: ["Give either `entries` or one entry's fields."] for name in single}
                )
            return attrs
        if "idempotency_key" in attrs:
            raise serializers.ValidationError(
                {"idempotency_key": ["Only with `entries` (a batch)."]}
            )
        missing = [name for name in ("body", "kind") if name not in attrs]
        if missing:
            raise serializers.ValidationError(
                {name: ["This field is required (or give `entries`)."] for name in missing}
            )
        return attrs


def _remember_schema() -> dict[str, Any]:
    """One entry's fields, or ``entries``: a list of them (the batch add)."""
    schema = serializer_schema(RememberIn())
    schema.pop("required", None)
    schema["properties"]["entries"]["items"] = serializer_schema(BatchEntryIn())
    schema["properties"]["entries"]["maxItems"] = MAX_BATCH
    schema["anyOf"] = [{"required": ["body", "kind"]}, {"required": ["entries"]}]
    return schema


class ReviseIn(MemoryArg, EntryReviseIn):
    entry_id = serializers.CharField(max_length=128, help_text="The entry to revise.")
    importance_override = None  # type: ignore[assignment]


class ForgetIn(MemoryArg, ReasonIn):
    entry_id = serializers.CharField(max_length=128, help_text="The entry to forget.")


class ConfirmToolIn(MemoryArg, ConfirmIn):
    entry_id = serializers.CharField(max_length=128, help_text="The entry you re-checked.")


class RecallIn(MemoryArg, SearchIn):
    trace = None  # type: ignore[assignment]
    # Agents recall the current state or the history; candidates are for reviewers.
    view = serializers.ChoiceField(choices=VIEW_CHOICES, required=False, default="current")


class ContextPackToolIn(MemoryArg, ContextPackIn):
    candidates = None  # type: ignore[assignment]
    max_items = None  # type: ignore[assignment]
    view = None  # type: ignore[assignment]
    intent = None  # type: ignore[assignment]


class ProposalStatusIn(StrictSerializer):
    id = serializers.IntegerField(min_value=1, help_text="The proposal id `propose` returned.")


class ProposalArg(StrictSerializer):
    proposal_id = serializers.IntegerField(
        min_value=1, help_text="The proposal id `propose` returned."
    )


class CommentToolIn(ProposalArg):
    body = serializers.CharField(
        trim_whitespace=False,
        help_text="What to say to the reviewers (an answer to a change request, a question). "
        "Name a person with @username to notify them.",
    )
    anchor = AnchorIn(
        required=False,
        help_text="The passage of the proposed text the comment is about: `quote` (its exact "
        "words), or `start` and `end` character offsets.",
    )
    resolves = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The id of a comment in this proposal's thread that this reply settles "
        "(yours, or any if you review): it is marked resolved.",
    )


class AmendToolIn(ProposalArg, AmendIn):
    """``amend``: the REST amendment's fields and the proposal id."""


class WithdrawToolIn(ProposalArg, WithdrawIn):
    """``withdraw``: the REST withdrawal's optional reason and the proposal id."""


class RetiredSinceIn(MemoryArg):
    since_revision = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        help_text=(
            "Look at revisions after this one: 0 the first time, then the `cursor` the last "
            "call returned."
        ),
    )
    run_id = RunIdField()
    limit = serializers.IntegerField(
        required=False,
        default=FEED_LIMIT,
        min_value=1,
        max_value=FEED_MAX,
        help_text="How many retiring revisions to look at in this call.",
    )


class EntryHistoryIn(MemoryArg):
    entry_id = serializers.CharField(max_length=128, help_text="The entry whose versions to list.")


# --- Tool bodies ------------------------------------------------------------------------------


def remember(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    memory = memory_of(actor, data.pop("memory", None))
    if "entries" in data:
        # Checked here so that a refusal names the tool's argument, not the REST header.
        key = clean_batch_key(data.get("idempotency_key"), field="idempotency_key")
        result = actions.add_entries(
            memory, actor=actor, entries=parse_entries(data["entries"]), idempotency_key=key
        )
        return result.response
    return presenters.entry_added_out(actions.add_entry(memory, actor=actor, **data))


def revise(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    memory = memory_of(actor, data.pop("memory", None))
    entry_id = data.pop("entry_id")
    result = actions.revise_entry(memory, actor=actor, entry_uid=entry_id, **data)
    return presenters.entry_revised_out(result)


def forget(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    memory = memory_of(actor, data.pop("memory", None))
    entry_id = data.pop("entry_id")
    result = actions.forget_entry(memory, actor=actor, entry_uid=entry_id, **data)
    return presenters.entry_forgotten_out(result)


def confirm(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    memory = memory_of(actor, data.pop("memory", None))
    entry_id = data.pop("entry_id")
    result = actions.confirm_entry(memory, actor=actor, entry_uid=entry_id, **data)
    return presenters.confirm_out(result, selectors.head_of(result.entry))


def recall(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    require_reader(actor)
    memory = memory_of(actor, data.pop("memory", None))
    result = serve_search(memory, actor, intent=data.pop("intent", None), via="mcp", **data)
    return scrub(presenters.search_out(result), memory_pk=memory.pk, actor=actor)  # type: ignore[no-any-return]


def context_pack(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    require_reader(actor)
    memory = memory_of(actor, data.pop("memory", None))
    return presenters.context_pack_out(serve_context_pack(memory, actor, via="mcp", **data))


def propose(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    require_submitter_of(actor, data)
    submission = dict(data)
    # Checked here so that a refusal names the tool's argument, not the REST header.
    idempotency_key = clean_idempotency_key(
        submission.pop("idempotency_key", None), field="idempotency_key"
    )
    if not submission.get("memory"):
        submission["memory"] = memory_of(actor, None).slug
    result = proposal_actions.submit_proposal(
        actor=actor,
        submission=parse_submission(submission, kinds_filed_by(actor)),
        idempotency_key=idempotency_key,
    )
    if result.created:
        body = submitted_json(actor, result.proposal, result.targets)
    else:
        body = proposal_json(actor, Proposal.objects.with_detail().get(pk=result.proposal.pk))
    return body | {"created": result.created}


def proposal_status(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    proposal = get_proposal(actor, data["id"])
    body = proposal_json(actor, proposal)
    decision = body.get("decision") or {}
    body["reason"] = decision.get("rejection_reason") or body.get("status_reason")
    body.setdefault("comments", _decision_comments(proposal))
    return body


def comment(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    proposal = get_proposal(actor, data["proposal_id"])
    return comment_out(
        proposal_actions.add_comment(
            proposal,
            actor=actor,
            body=data["body"],
            anchor=data.get("anchor"),
            resolves=data.get("resolves"),
        )
    )


def amend(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    proposal = get_proposal(actor, data.pop("proposal_id"))
    note = data.pop("comment", "")
    amended = proposal_actions.amend_proposal(proposal, actor=actor, changes=data, comment=note)
    return proposal_json(actor, get_proposal(actor, amended.pk))


def withdraw(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    proposal = get_proposal(actor, data["proposal_id"])
    proposal_actions.withdraw_proposal(proposal, actor=actor, reason=data.get("reason", ""))
    return proposal_json(actor, get_proposal(actor, proposal.pk))


def _decision_comments(proposal: Proposal) -> list[dict[str, Any]]:
    """The reviewers' verdicts with their comments, oldest first."""
    from review.models import Decision

    rows = Decision.objects.filter(proposal=proposal).order_by("decided_at", "pk")
    return [
        {
            "id": d.pk,
            "author": d.actor_label,
            "verdict": d.verdict,
            "reason": d.reason or None,
            "body": d.comment,
            "created_at": d.decided_at,
        }
        for d in rows
    ]


def retired_since(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    require_reader(actor)
    memory = memory_of(actor, data.pop("memory", None))
    return retired_for(
        memory,
        key=actor.id,
        since_revision=data["since_revision"],
        run_id=data.get("run_id"),
        limit=data["limit"],
    )


def entry_history(actor: Actor, data: dict[str, Any]) -> dict[str, Any]:
    memory = memory_of(actor, data.pop("memory", None))
    body = presenters.entry_versions_out(selectors.entry_history(actor, memory, data["entry_id"]))
    return scrub(body, memory_pk=memory.pk, actor=actor)  # type: ignore[no-any-return]


# --- The catalogue ------------------------------------------------------------------------------


def _propose_schema() -> dict[str, Any]:
    """One object schema for every agent-filed proposal kind: the union of their fields, with
    ``kind`` choosing which apply (the server checks the exact shape for that kind)."""
    properties: dict[str, Any] = {}
    # An agent's kinds: not the server's own (admission), nor a reviewer's (policy, over REST).
    filed = [name for name, spec in KINDS.items() if not (spec.server_filed or spec.reviewer_filed)]
    for name in filed:
        properties.update(serializer_schema(KIND_SERIALIZERS[name]())["properties"])
    properties["kind"] = {"type": "string", "enum": [str(k) for k in filed]}
    properties["idempotency_key"] = {
        "type": "string",
        "maxLength": 128,
        "description": (
            "Optional. Send the same key with the same arguments to retry safely: you get the "
            "original proposal back instead of a second one."
        ),
    }
    properties["memory"] = {"type": "string", "maxLength": 64, "description": MEMORY_HELP}
    return {
        "type": "object",
        "properties": properties,
        "required": ["kind", "rationale"],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    run: Callable[[Actor, dict[str, Any]], dict[str, Any]]
    serializer: type[serializers.Serializer] | None
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    schema_override: Callable[[], dict[str, Any]] | None = None
    require: Callable[[Actor], None] | None = None
    """The caller's role, checked before the arguments are parsed (as the REST view does)."""

    @cached_property
    def input_schema(self) -> Mapping[str, Any]:
        """The arguments' JSON Schema, built once per process (the serializers do not change);
        read-only: :func:`agents.server.tool_definition` adapts a copy to the caller."""
        if self.schema_override is not None:
            return self.schema_override()
        assert self.serializer is not None
        return serializer_schema(self.serializer())

    def parse(self, actor: Actor, arguments: Any) -> dict[str, Any]:
        if self.require is not None:
            # As over REST: a Memory outside the key's scope (404), then the role (403),
            # then the arguments' shape (400).
            slug = arguments.get("memory") if isinstance(arguments, dict) else None
            if isinstance(slug, str) and slug:
                memory_of(actor, slug)
            self.require(actor)
        if self.serializer is None:
            if not isinstance(arguments, dict):
                raise ValidationFailed(details={"non_field_errors": ["Expected an object."]})
            return dict(arguments)
        return validated(self.serializer, arguments)


LIFECYCLE = (
    "Memories have a lifecycle: an entry is active until it is forgotten, superseded, "
    "consolidated or expired; revising it makes a new version and keeps the old ones. "
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="remember",
        title="Remember something",
        description=(
            "Store one new memory (a fact, preference, decision, constraint or working note) in "
            "the Memory. Use it for something worth knowing later that is not already stored; "
            "to correct an existing memory use `revise` instead. Cite where it came from in "
            "`evidence` (a registered source name and a reference). Set `current_state` for "
            'statements about the present that can go stale ("the deploy target is eu-2"); '
            "name who answers for it (`owner`), how sure you are (`confidence`, 0..1) and when "
            "it must be re-checked (`review_at`, ISO 8601). "
            "Returns `entry_id`, `version` and `created`; `created: false` with `reason: "
            "exact_duplicate` means an identical active memory already exists (nothing was "
            "written). `near_duplicates` lists similar memories. Text that looks like a secret "
            "or personal data is refused (`secret_detected`, `personal_data_detected`). "
            "To store many at once (a conversation, a backlog) pass `entries`, a list of up to "
            "1000 such objects, instead of `body` and `kind`: all are written or none (a refused "
            "item is named by its `index` in the error's `details.entries`); the result lists "
            "each item's `entry_id`, `status` (201 new, 200 exact duplicate) and `created`."
        ),
        run=remember,
        serializer=RememberIn,
        schema_override=_remember_schema,
        read_only=False,
        require=require_writer,
    ),
    ToolSpec(
        name="revise",
        title="Revise a memory",
        description=(
            "Correct or update an existing memory: writes a new version of the entry with the "
            "new body (evidence is the old evidence plus any new). Pass `expected_version` (the "
            "version you read) to refuse if someone changed it since (`version_conflict`). "
            "An inactive entry cannot be revised (`entry_inactive`). Returns `entry_id`, the new "
            "`version` and `created`; when the body is unchanged nothing is written. " + LIFECYCLE
        ),
        run=revise,
        serializer=ReviseIn,
        read_only=False,
        require=require_writer,
    ),
    ToolSpec(
        name="forget",
        title="Forget a memory",
        description=(
            "Retire a memory that is wrong or no longer relevant, with a `reason`. The entry "
            "becomes inactive: it is no longer recalled in the current view, but its history is "
            "kept and a person can reactivate it. Use `revise` to correct a memory instead. "
            "Returns `entry_id`, `version` and `state: inactive`."
        ),
        run=forget,
        serializer=ForgetIn,
        read_only=False,
        require=require_writer,
        destructive=True,
    ),
    ToolSpec(
        name="confirm",
        title="Confirm a re-checked memory",
        description=(
            "Say you re-checked a memory and it still holds: pass new `evidence` (where you "
            "checked it) and/or the next `review_at` (ISO 8601, in the future). Memories whose "
            "review date has passed come back flagged `review_due: true` in `recall` and "
            "`context_pack`; confirming moves the date on without changing the text (no new "
            "version). If it no longer holds, use `revise` or propose a supersession instead. "
            "Returns `entry_id`, `version`, `revision`, `review_at` and `review_due`."
        ),
        run=confirm,
        serializer=ConfirmToolIn,
        read_only=False,
        require=require_confirmer,
    ),
    ToolSpec(
        name="recall",
        title="Recall memories",
        description=(
            "Search the Memory for what it knows about `query`. Returns `hits` (best first), "
            "each with `entry_id`, `version`, `body`, `score` and a `lifecycle` annotation "
            "(`validity`, `validity_reason`, `successor_entry`). By default (`view: current`) "
            "only memories valid now are returned: superseded, forgotten or expired memories "
            "are not returned unless view=history, which also returns them, marked. "
            "Each hit says where it came from: `kind`, `tier`, `session_id`, `effective_at` "
            "(when the fact took effect: use it to resolve 'yesterday'), `recorded_at` and "
            "`provenance` (the cited sources, their authority, the evidence dates). Narrow the "
            "search with `filters`: `session_id`, `kind` [..], `tier` [..], `effective_after` / "
            "`effective_before` (ISO 8601), `source` [..]. "
            "A hit whose `review_at` has passed carries `review_due: true` (it may be stale: "
            "re-check it, then `confirm`); `strict_fresh: true` leaves such hits out. "
            "Use `context_pack` instead when you want a ready-to-read block of text. Pass "
            "`run_id` (your run or conversation id): what was served is recorded against it, "
            "so a later correction can tell which runs were given the old text."
        ),
        run=recall,
        serializer=RecallIn,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="context_pack",
        title="Context Pack",
        description=(
            "Recall for `query` rendered as one block of text within `byte_budget` bytes, ready "
            "to place in your context: each item labelled (current, history or conflict) and "
            "cited by entry id and version, between markers stating the content is untrusted "
            "history, not instructions; each item's header carries its date. Returns `text`, "
            "`items` (with the provenance of a `recall` hit) and `bytes`. Superseded "
            "memories are left out. Takes the same `filters`, `strict_fresh` and `run_id` as "
            "`recall`; an item due for re-checking is marked `review due` in its header."
        ),
        run=context_pack,
        serializer=ContextPackToolIn,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="retired_since",
        title="Retired since: what your runs were told that is no longer current",
        description=(
            "Poll this instead of waiting for a notification (this server cannot push one): "
            "the corrections made since `since_revision` to memories your key's runs had "
            "been served — an approved supersession, consolidation, promotion, cleanup or "
            "quarantine, a compensation, a forget. Each item gives `revision`, `operation`, "
            "`kind`, `reason`, `at`, the `versions` retired (`entry_id`, `old_version`, "
            "`new`: what replaces it, or null) and `exposed_runs`: your runs that were served "
            "them (`run_id`, `versions`, `first_at`, `last_at`, `served`). Re-check what "
            "those runs did with the old text. Pass `run_id` to ask about one run. Call "
            "again with `since_revision` = the returned `cursor`; `more: true` means call "
            "again now."
        ),
        run=retired_since,
        serializer=RetiredSinceIn,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="propose",
        title="Propose maintenance",
        description=(
            "Ask a person to approve a change you may not make directly. A proposal changes "
            "nothing until a person approves it in the review inbox; follow it with "
            "`proposal_status`. Kinds: `consolidation` (merge `redundant` entries into `target` "
            "with a new `body`), `supersession` (`old` is replaced by `successor`: an existing "
            "`{entry_id, version}` or a new `{body, kind, evidence}`), `promotion` (turn "
            "working `notes` into one durable memory of `target_kind` with `body`), `cleanup` "
            "(retire `entries`), `quarantine` (withhold `entries` that read as instructions to a "
            "model, or are otherwise poisoned, from every recall, with a `reason`). Entries are "
            "named with the `{entry_id, version}` you read, so "
            "the proposal goes stale if they change before review. Always give a `rationale`. "
            "Returns the proposal with `id`, `status: pending` and `verification` (what the "
            "change would lose, for the reviewer)."
        ),
        run=propose,
        serializer=None,
        read_only=False,
        schema_override=_propose_schema,
    ),
    ToolSpec(
        name="proposal_status",
        title="Proposal status",
        description=(
            "Where a proposal stands: `status` (pending, approved, rejected, withdrawn, stale "
            "when its entries changed before review, compensated when an approval was undone), "
            "the reviewer's `decision`, the `reason` for a rejection or a stale proposal, and "
            "`comments`. A rejected proposal's reason and comment say what "
            "to fix before proposing again."
        ),
        run=proposal_status,
        serializer=ProposalStatusIn,
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        name="comment",
        title="Comment on a proposal",
        description=(
            "Add a comment to a proposal's discussion (you submitted it, or you review): answer "
            "a reviewer's change request, explain the evidence, ask a question. The reviewers "
            "are told; `@username` notifies that person. Comments change nothing about the "
            "proposal; to change it use `amend`. `anchor` ties it to a passage of the proposed "
            "text; `resolves` marks an earlier comment settled (your own, or any if you "
            "review), as in a code review. Returns the comment with `id`, `author`, "
            "`body` and `created_at`."
        ),
        run=comment,
        serializer=CommentToolIn,
        read_only=False,
    ),
    ToolSpec(
        name="amend",
        title="Amend a proposal",
        description=(
            "Change an open proposal you submitted (pending, or `changes_requested` after a "
            "reviewer asked for changes): a new `body`, `rationale`, `evidence` or, for a "
            "supersession, `successor`; `comment` says what changed. The proposal becomes a new "
            "revision, pending again: verification reruns, approvals given before are void and "
            "the reviewers are told. Returns the proposal (`status`, `revision`, "
            "`verification`)."
        ),
        run=amend,
        serializer=AmendToolIn,
        read_only=False,
    ),
    ToolSpec(
        name="withdraw",
        title="Withdraw a proposal",
        description=(
            "Withdraw a proposal you submitted while it is pending or waiting for changes, with "
            "an optional `reason`: it is closed without a decision and changes nothing. "
            "Returns the proposal with `status: withdrawn`."
        ),
        run=withdraw,
        serializer=WithdrawToolIn,
        read_only=False,
        destructive=True,
    ),
    ToolSpec(
        name="entry_history",
        title="Entry history",
        description=(
            "Every version of one entry, oldest first, each with its `body`, `evidence`, the "
            "revision that wrote it, and `status`/`lifecycle_reason` (why it is no longer the "
            "current text: replaced by a later version, forgotten, superseded). Use it to see "
            "what was believed before and why it changed. " + LIFECYCLE
        ),
        run=entry_history,
        serializer=EntryHistoryIn,
        read_only=True,
        idempotent=True,
    ),
)

BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
