"""Browser forms of the reviewer inbox: approve, reject, request changes, compensate, and the
proposal page's discussion (comment) and reviewer edit (amend).

Forms only shape input; the rules (who may decide, lost details, pre-state, limits) live in
``review.actions`` and come back as domain errors that the views put on these forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings
from django.utils.html import format_html_join

from proposals.models import RejectionReason


def reason_label(reason: str) -> str:
    """A rejection reason as the reject forms name it (the discussion and the decision say it
    the same way)."""
    return str(RejectionReason(reason).label) if reason in RejectionReason.values else reason


def _comment(required: bool, label: str = "Comment") -> forms.CharField:
    return forms.CharField(
        label=label,
        required=required,
        strip=False,
        max_length=int(settings.STEWARD_MAX_REASON_CHARS),
        widget=forms.Textarea(attrs={"rows": 2}),
    )


def reason_options() -> str:
    """The reject form's ``<option>`` list, built once per page (the inbox has one per row)."""
    return format_html_join(
        "",
        '<option value="{}">{}</option>',
        [("", "Choose a reason…"), *RejectionReason.choices],
    )


class ApproveForm(forms.Form):
    comment = _comment(required=False)
    #: The proposal revision the page showed: an approval is for the text the reviewer read.
    revision = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    acknowledge = forms.MultipleChoiceField(
        label="Acknowledge lost details", required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, lost_details: Sequence[str] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        field = self.fields["acknowledge"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = [(d, d) for d in lost_details]


class RejectForm(forms.Form):
    reason = forms.ChoiceField(
        label="Reason",
        choices=[("", "Choose a reason…"), *RejectionReason.choices],
    )
    comment = _comment(required=True)


class CompensateForm(forms.Form):
    """Why the operation is undone (required: the compensation's audit record says it)."""

    comment = _comment(required=True)


class RequestChangesForm(forms.Form):
    """Ask the submitter for changes: the comment (required) says what should change."""

    comment = _comment(required=True, label="What should change")


class CommentForm(forms.Form):
    """One message in the proposal's discussion (``proposals.actions.add_comment``)."""

    body = forms.CharField(
        label="Your comment",
        strip=False,
        max_length=int(settings.STEWARD_MAX_REASON_CHARS),
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    quote = forms.CharField(
        label="About this passage of the proposed text",
        strip=False,
        required=False,
        max_length=2000,
    )


class AmendForm(forms.Form):
    """A reviewer's edit of the proposed text (``proposals.actions.amend_proposal``): the new
    text (merged body, promoted body or new successor's body) and an optional note."""

    text = forms.CharField(label="Proposed text", strip=False, widget=forms.Textarea)
    note = _comment(required=False, label="Note on this edit")


class _IdsField(forms.Field):
    """Proposal ids from repeated ``ids`` inputs (the row checkboxes), each once, in order."""

    widget = forms.MultipleHiddenInput

    def __init__(self, *, max_ids: int, **kwargs: Any):
        self.max_ids = max_ids
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> list[int]:
        raw = [value] if isinstance(value, str) else list(value or [])
        try:
            ids = [int(v) for v in raw if str(v).strip()]
        except (TypeError, ValueError) as exc:
            raise forms.ValidationError("Proposal ids are numbers.") from exc
        return list(dict.fromkeys(ids))

    def validate(self, value: list[int]) -> None:
        if not value:
            raise forms.ValidationError("Select at least one proposal.")
        if len(value) > self.max_ids:
            raise forms.ValidationError(f"At most {self.max_ids} proposals at once.")


class BulkDecideForm(forms.Form):
    """The inbox's bulk bar: Approve selected (optional comment) or Reject selected (a reason
    and a comment, both required)."""

    action = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    reason = forms.ChoiceField(
        label="Reason",
        required=False,
        choices=[("", "Choose a reason…"), *RejectionReason.choices],
    )
    comment = _comment(required=False)

    def __init__(self, *args: Any, max_ids: int = 100, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["ids"] = _IdsField(max_ids=max_ids)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("action") == "reject":
            if not data.get("reason"):
                self.add_error("reason", "Choose a reason to reject.")
            if not (data.get("comment") or "").strip():
                self.add_error("comment", "Say why you reject them.")
        return data


class AssignForm(forms.Form):
    """A row's "Assign": a reviewer's username, or empty to clear the assignment."""

    reviewer = forms.CharField(label="Assign to", required=False, max_length=150)


class SavedViewForm(forms.Form):
    """ "Save this view": the name the inbox's current filters, search and order are kept under
    (the filters themselves arrive as the form's hidden fields)."""

    name = forms.CharField(label="View name", max_length=80, strip=True)
