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

REASON_LABELS = {
    RejectionReason.DUPLICATE_OF_OTHER: "Duplicate of another proposal",
    RejectionReason.WRONG: "Wrong",
    RejectionReason.INSUFFICIENT_EVIDENCE: "Insufficient evidence",
    RejectionReason.LOSES_DETAIL: "Loses a detail",
    RejectionReason.OTHER: "Other",
}


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
        [("", "Choose a reason…"), *((k, REASON_LABELS[k]) for k in RejectionReason)],
    )


class ApproveForm(forms.Form):
    comment = _comment(required=False)
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
        choices=[("", "Choose a reason…"), *((k, REASON_LABELS[k]) for k in RejectionReason)],
    )
    comment = _comment(required=True)


class CompensateForm(forms.Form):
    comment = _comment(required=False)


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


class AmendForm(forms.Form):
    """A reviewer's edit of the proposed text (``proposals.actions.amend_proposal``): the new
    text (merged body, promoted body or new successor's body) and an optional note."""

    text = forms.CharField(label="Proposed text", strip=False, widget=forms.Textarea)
    note = _comment(required=False, label="Note on this edit")
