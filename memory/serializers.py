"""Input serializers: the shape of what the REST views and MCP tools accept (domain rules live
in the actions). Output shapes live in :mod:`memory.presenters`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from lib.api import StrictSerializer, error_details
from lib.wording import listed

from .actions.batch import max_batch
from .context_pack import (
    DEFAULT_BUDGET,
    DEFAULT_CANDIDATES,
    DEFAULT_MAX_ITEMS,
    MAX_BUDGET,
    MIN_BUDGET,
)
from .exceptions import BatchRefused, DomainError, TooLarge, ValidationFailed
from .models import (
    Authority,
    HeadState,
    Kind,
    PinCategory,
    Sensitivity,
    Tier,
    Validity,
    Verification,
)
from .search import FILTER_KEYS

# --- Inputs ---------------------------------------------------------------------------------


class DeclarationIn(StrictSerializer):
    authority = serializers.ChoiceField(choices=Authority.choices)
    verification = serializers.ChoiceField(choices=Verification.choices)


class EvidenceIn(StrictSerializer):
    source = serializers.CharField(trim_whitespace=False)  # type: ignore[assignment]
    ref = serializers.CharField(trim_whitespace=False)
    observed_at = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    quote = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class MemoryCreateIn(StrictSerializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    policy = serializers.DictField(required=False)


class MemoryPatchIn(StrictSerializer):
    policy = serializers.DictField()


class SourceCreateIn(StrictSerializer):
    name = serializers.CharField(max_length=128)
    description = serializers.CharField(required=False, allow_blank=True)
    declaration = DeclarationIn(required=False)


class EntryCreateIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    kind = serializers.ChoiceField(choices=Kind.choices)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    session_id = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    current_state = serializers.BooleanField(required=False, default=False)
    effective_at = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices, required=False)
    evidence = EvidenceIn(many=True, required=False)
    dedupe = serializers.BooleanField(required=False, default=True)
    near_duplicate_of = serializers.CharField(required=False, allow_null=True)
    owner = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        trim_whitespace=False,
        help_text="Who answers for the fact: a user or team name (spec 004).",
    )
    confidence = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=1, help_text="0..1."
    )
    review_at = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text=(
            "ISO 8601 date or datetime: when the fact must be re-checked. Without it the "
            "Memory's `revalidation` policy may give one."
        ),
    )


class EntryReviseIn(StrictSerializer):
    body = serializers.CharField(trim_whitespace=False)
    evidence = EvidenceIn(many=True, required=False)
    expected_version = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    importance_override = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=3
    )


class ConfirmIn(StrictSerializer):
    evidence = EvidenceIn(many=True, required=False)
    review_at = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text=(
            "ISO 8601 date or datetime in the future: the next re-check. Without it the "
            "Memory's `revalidation` policy gives one from now, else the entry has none."
        ),
    )


class ReasonIn(StrictSerializer):
    reason = serializers.CharField(trim_whitespace=False)


class NoFieldsIn(StrictSerializer):
    """The body of an action that takes no fields: none, or ``{}``."""


class OptionalReasonIn(StrictSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class PinIn(StrictSerializer):
    pinned = serializers.BooleanField()
    category = serializers.ChoiceField(choices=PinCategory.choices, required=False)
    reason = serializers.CharField(trim_whitespace=False)


class RelationIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=[("conflicts_with", "conflicts_with")])
    from_entry = serializers.CharField()
    to_entry = serializers.CharField()
    evidence = EvidenceIn(many=True, required=False)


class EntryListQuery(StrictSerializer):
    state = serializers.ChoiceField(choices=HeadState.choices, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    validity = serializers.ChoiceField(choices=Validity.choices, required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)


class RevisionListQuery(StrictSerializer):
    since_revision = serializers.IntegerField(required=False, min_value=0, default=0)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500)


class BatchEntryIn(EntryCreateIn):
    """One item: the single add's fields. The near-duplicate check of a batch is deferred to
    the offline health pass (DESIGN.md §7), so ``dedupe`` and ``near_duplicate_of`` are not
    taken."""

    dedupe = None  # type: ignore[assignment]
    near_duplicate_of = None  # type: ignore[assignment]


def parse_entries(raw: Any) -> list[dict[str, Any]]:
    """Each item of ``raw`` checked by :class:`BatchEntryIn`; :class:`BatchRefused` naming
    every malformed item by its index (400 ``invalid``), 413 over the batch limit."""
    if not isinstance(raw, list) or not raw:
        raise ValidationFailed(details={"entries": ["A non-empty list of entries."]})
    limit = max_batch()
    if len(raw) > limit:
        raise TooLarge(
            f"A batch holds at most {limit} entries.",
            details={"entries": [f"At most {limit} entries (got {len(raw)})."]},
        )
    out: list[dict[str, Any]] = []
    errors: dict[int, DomainError] = {}
    for i, item in enumerate(raw):
        serializer = BatchEntryIn(data=item)
        if serializer.is_valid():
            out.append(dict(serializer.validated_data))
        else:
            errors[i] = ValidationFailed(details=error_details(serializer.errors))
    if errors:
        raise BatchRefused(errors)
    return out


# --- Recall ------------------------------------------------------------------------------------

VIEW_CHOICES = [("current", "current"), ("history", "history")]
#: Search also offers reviewers and auditors the candidates waiting for admission review.
SEARCH_VIEWS = [*VIEW_CHOICES, ("candidates", "candidates")]
INTENT_CHOICES = [("current", "current"), ("none", "none")]
#: The header naming the caller's run when the body does not (API.md "Recall").
RUN_HEADER = "X-Steward-Run"
RUN_HELP = (
    "Your run or conversation id (ASCII, at most 128 characters; also the `X-Steward-Run` "
    "header). Recorded in the exposure ledger with the entry versions this call served, so a "
    "later correction can name the runs that were told the old text."
)


def run_id_problem(value: object) -> str | None:
    """Why ``value`` may not be a run id (None when it may): a string of 1..128 printable
    ASCII characters."""
    if not isinstance(value, str) or not value:
        return "A non-empty string."
    if len(value) > settings.STEWARD_MAX_ID_CHARS:
        return f"At most {settings.STEWARD_MAX_ID_CHARS} characters."
    if not all(" " <= c <= "~" for c in value):
        return "Printable ASCII only."
    return None


class RunIdField(serializers.CharField):
    """``run_id``: printable ASCII, 1..128 characters, kept exactly as given."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            required=False, trim_whitespace=False, allow_blank=False, help_text=RUN_HELP, **kwargs
        )

    def to_internal_value(self, data: Any) -> str:
        problem = run_id_problem(data)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return str(data)


class FiltersIn(StrictSerializer):
    """Scoped recall (API.md "Recall"): each key narrows both channels before fusion."""

    session_id = serializers.CharField(
        required=False,
        max_length=settings.STEWARD_MAX_ID_CHARS,
        help_text="Only entries written in this session.",
    )
    kind = serializers.ListField(
        child=serializers.ChoiceField(choices=Kind.choices),
        required=False,
        allow_empty=False,
        max_length=len(Kind.choices),
        help_text="Only entries of one of these kinds.",
    )
    tier = serializers.ListField(
        child=serializers.ChoiceField(choices=Tier.choices),
        required=False,
        allow_empty=False,
        max_length=len(Tier.choices),
        help_text="Only entries of one of these tiers.",
    )
    effective_after = serializers.DateTimeField(
        required=False,
        help_text=(
            "Only entries effective at or after this time (ISO 8601; a date is its midnight "
            "UTC). An entry of unknown effective time never matches a time range."
        ),
    )
    effective_before = serializers.DateTimeField(
        required=False,
        help_text="Only entries effective before this time (ISO 8601, exclusive).",
    )
    source = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(max_length=128),
        required=False,
        allow_empty=False,
        max_length=32,
        help_text="Only entries whose evidence cites one of these registered sources.",
    )

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict) and (unknown := sorted(set(data) - set(FILTER_KEYS))):
            accepted = f"Unknown filter: filters are {listed(FILTER_KEYS)}."
            raise serializers.ValidationError({name: [accepted] for name in unknown})
        names = data.get("source") if isinstance(data, dict) else None
        if isinstance(names, list) and not all(isinstance(n, str) for n in names):
            raise serializers.ValidationError({"source": ["A list of source names (strings)."]})
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        after, before = attrs.get("effective_after"), attrs.get("effective_before")
        if after is not None and before is not None and after >= before:
            raise serializers.ValidationError(
                {"effective_before": ["Must be later than effective_after."]}
            )
        return attrs


FILTERS_HELP = (
    "Scope the recall: `session_id`, `kind` [..], `tier` [..], `effective_after` / "
    "`effective_before` (ISO 8601; unknown time never matches), `source` [..]. Applied in every "
    "channel before fusion, like the validity filter."
)

STRICT_FRESH_HELP = (
    "Leave out entries due for re-checking (their `review_at` has passed), in every channel "
    "before fusion. Without it they are returned, flagged `review_due: true`."
)


class SearchIn(StrictSerializer):
    query = serializers.CharField(trim_whitespace=False, max_length=8192)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=50)
    view = serializers.ChoiceField(choices=SEARCH_VIEWS, required=False, default="current")
    intent = serializers.ChoiceField(choices=INTENT_CHOICES, required=False, allow_null=True)
    trace = serializers.BooleanField(required=False, default=False)
    filters = FiltersIn(required=False, allow_null=True, help_text=FILTERS_HELP)
    strict_fresh = serializers.BooleanField(
        required=False, default=False, help_text=STRICT_FRESH_HELP
    )
    run_id = RunIdField()


class ContextPackIn(StrictSerializer):
    query = serializers.CharField(trim_whitespace=False, max_length=8192)
    byte_budget = serializers.IntegerField(
        required=False, default=DEFAULT_BUDGET, min_value=MIN_BUDGET, max_value=MAX_BUDGET
    )
    candidates = serializers.IntegerField(
        required=False, default=DEFAULT_CANDIDATES, min_value=1, max_value=DEFAULT_CANDIDATES
    )
    max_items = serializers.IntegerField(
        required=False, default=DEFAULT_MAX_ITEMS, min_value=1, max_value=DEFAULT_MAX_ITEMS
    )
    view = serializers.ChoiceField(choices=VIEW_CHOICES, required=False, default="current")
    intent = serializers.ChoiceField(choices=INTENT_CHOICES, required=False, allow_null=True)
    filters = FiltersIn(required=False, allow_null=True, help_text=FILTERS_HELP)
    strict_fresh = serializers.BooleanField(
        required=False, default=False, help_text=STRICT_FRESH_HELP
    )
    run_id = RunIdField()
