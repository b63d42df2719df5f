"""The response bodies of the review API, for the OpenAPI document (see ``memory.api.openapi``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers as s

from memory.api.openapi import Null


class Decided(s.Serializer):
    id = s.IntegerField()
    status = s.CharField()
    operation = s.IntegerField(**Null)
    revision = s.IntegerField(**Null)
    approvals = s.IntegerField()
    approvals_required = s.IntegerField()


class Rejected(Decided):
    reason = s.CharField()
    comment = s.CharField(allow_blank=True)


class OperationOut(s.Serializer):
    id = s.IntegerField()
    memory = s.CharField()
    proposal = s.IntegerField(**Null)
    kind = s.CharField()
    revision = s.IntegerField()
    pre_state = s.JSONField()
    produced = s.JSONField()
    derived_view_impact = s.JSONField()
    compensation_plan = s.JSONField()
    irreversible_effects = s.JSONField()
    approved_by = s.CharField(allow_blank=True)
    created_at = s.DateTimeField()
    compensation = s.JSONField(
        **Null,
        help_text="Once compensated: who, when, why, and its own `retired_versions` and "
        "`exposed_runs`.",
    )
    retired_versions = s.JSONField(
        help_text="`[{entry_id, old_version, new: {entry_id, version} | null}]`: the versions "
        "this operation retired or replaced."
    )
    exposed_runs = s.JSONField(
        help_text="`[{run_id, key, versions, first_at, last_at, served}]`: the runs the exposure "
        "ledger says were served a retired version, up to the operation."
    )
    exposed_runs_omitted = s.IntegerField()


class Compensated(s.Serializer):
    operation = s.IntegerField()
    revision = s.IntegerField()
    status = s.CharField()


RESPONSES: dict[tuple[str, str], dict[Any, Any]] = {
    ("ProposalApproveApi", "post"): {200: Decided},
    ("ProposalRejectApi", "post"): {200: Rejected},
    ("OperationDetailApi", "get"): {200: OperationOut},
    ("OperationCompensateApi", "post"): {200: Compensated},
}
