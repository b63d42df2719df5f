"""Policy: a reviewed change to a Memory's policy (API.md "Proposals", kind ``policy``).

- Input: ``{memory, policy: {...the keys to change...}, rationale}``; filed by reviewers (a
  scoped reviewer key over REST or MCP, a reviewer in the browser: the replay's "Enable", the
  maintenance page's schedule switches). Agents do not file it.
- Verified: the keys as ``PATCH`` checks them (``memory.actions.clean_policy``, stored text
  refused like any other); a change that sets every key to the value it holds is 422
  ``noop_rewrite``. The values the changed keys hold at filing are recorded (``before``), and
  checks say what the change turns on or loosens (the decay scan acting without review, fewer
  approvals, a job's schedule).
- One open proposal per Memory and set of keys: a second one for the same keys is 409
  ``duplicate_proposal``.
- Approval: the keys are merged into the policy like a ``PATCH`` — in the approval's
  transaction, audited as ``memory.policy_changed`` naming the proposal. When one of the keys
  no longer holds the value recorded at filing, 409 ``policy_changed`` and nothing is written
  (reject it, or its submitter withdraws it, and file the change again).
  ``approvals_required.policy`` (default 1) and no self-approval apply as to every kind.
- No revision and no operation: entries and recall do not change; a change is undone by
  another policy proposal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from lib.identity import Actor
from memory.actions import check_policy_text, clean_policy, write_policy
from memory.exceptions import PolicyChanged
from memory.models import Memory
from memory.personal_data import refused_kinds

from .. import verify
from ..exceptions import NoopRewrite, ValidationFailed
from ..inputs import ProposalCommonIn
from ..models import Proposal, ProposalKind
from . import base


class PolicyIn(ProposalCommonIn):
    policy = serializers.DictField(
        help_text="The policy keys to change, as PATCH /api/v1/memories/{slug} takes them."
    )


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def moved_keys(current: Mapping[str, Any], payload: Mapping[str, Any]) -> list[str]:
    """The keys of a policy change whose value in ``current`` is no longer the one recorded
    when it was filed (``before``; a key absent then must be absent now)."""
    before = payload.get("before") or {}
    return sorted(
        key
        for key in payload.get("policy") or {}
        if (key in current) != (key in before) or (key in current and current[key] != before[key])
    )


def _jobs_checks(current: Mapping[str, Any], changes: Mapping[str, Any], report: Any) -> None:
    if "jobs" not in changes:
        return
    old, new = current.get("jobs") or {}, changes.get("jobs") or {}
    for job in sorted(set(old) | set(new)):
        was = bool((old.get(job) or {}).get("enabled"))
        now = bool((new.get(job) or {}).get("enabled"))
        if was == now:
            continue
        hours = (new.get(job) or {}).get("every_hours", 24)
        if now:
            report.check(
                "job_schedule",
                "warn" if job == "l1" else "pass",
                f"Schedules {job} every {hours:g} h"
                + (" (the decay scan retires entries without review)." if job == "l1" else "."),
                job=job,
                enabled=True,
            )
        else:
            report.check(
                "job_schedule",
                "pass",
                f"Stops {job}'s schedule (a reviewer can still run it by hand).",
                job=job,
                enabled=False,
            )


class Policy(base.ProposalKindSpec):
    name = ProposalKind.POLICY
    revision_kind = ""  # approval writes no revision (changes_policy)
    serializer = PolicyIn
    input_roles = ()
    role_labels = {}
    diff_inputs = False
    changes_title = "What this changes in the policy of"
    diff_legend = False
    reviewer_filed = True
    changes_policy = True
    text_label = "Policy change"

    def refs(self, parsed: dict[str, Any]) -> list[base.Ref]:
        return []

    def clean(self, parsed: dict[str, Any], draft: base.Draft) -> None:
        raw = parsed["policy"]
        if not raw:
            raise ValidationFailed(
                "The policy change sets no key.", details={"policy": ["Set at least one key."]}
            )
        draft.policy = dict(clean_policy(raw))

    def scope_key(self, payload: Mapping[str, Any]) -> str | None:
        keys = ",".join(sorted(payload.get("policy") or {}))
        return hashlib.sha256(f"policy:{keys}".encode()).hexdigest()

    def verify(
        self, memory: Memory, draft: base.Draft, found: base.Found, report: verify.Report
    ) -> base.Payload:
        current = memory.policy or {}
        changes = draft.policy
        if all(key in current and current[key] == value for key, value in changes.items()):
            raise NoopRewrite(
                "The policy already holds these values; there is nothing to change.",
                details={"policy": sorted(changes)},
            )
        check_policy_text(changes, refused_kinds({**current, **changes}))
        report.check(
            "policy_valid",
            "pass",
            f"Every key is a valid policy setting ({', '.join(sorted(changes))}).",
        )
        _jobs_checks(current, changes, report)
        if changes.get("l1_enabled") is True and current.get("l1_enabled") is not True:
            report.check(
                "l1_enabled",
                "warn",
                "Lets the decay scan retire entries without review.",
            )
        if "approvals_required" in changes:
            old = current.get("approvals_required") or {}
            lowered = sorted(
                k for k, v in changes["approvals_required"].items() if v < int(old.get(k, 1))
            )
            if lowered:
                report.check(
                    "approvals_lowered",
                    "warn",
                    f"Fewer approvals required for {', '.join(lowered)}.",
                    kinds=lowered,
                )
        return {
            "policy": changes,
            "before": {key: current[key] for key in changes if key in current},
        }

    def plan(
        self, memory: Memory, proposal: Proposal, by_role: base.ByRole, heads: base.Heads
    ) -> base.ApprovalPlan:  # pragma: no cover - approval calls apply_policy
        raise NotImplementedError("A policy change writes no revision.")

    def apply_policy(self, memory: Memory, proposal: Proposal, *, actor: Actor) -> None:
        """Merge the change into the locked Memory's policy; 409 ``policy_changed`` when a key
        moved since filing (nothing written)."""
        payload = proposal.payload or {}
        moved = moved_keys(memory.policy or {}, payload)
        if moved:
            raise PolicyChanged(
                f"The policy's {', '.join(moved)} changed since proposal #{proposal.pk} was "
                "filed: reject it (or its submitter withdraws it) and file the change again.",
                details={"proposal": proposal.pk, "keys": moved},
            )
        changes = clean_policy(payload.get("policy") or {})
        write_policy(memory, actor=actor, changes=changes, proposal_id=proposal.pk)

    def recall_effect(self, proposal: Proposal, by_role: base.ByRole) -> base.RecallEffect:
        return base.RecallEffect()

    def lasting_effects(self, proposal: Proposal, by_role: base.ByRole) -> list[str]:
        return []

    def result_text(self, proposal: Proposal) -> str:
        keys = sorted((proposal.payload or {}).get("policy") or {})
        return f"Policy change: {', '.join(keys)}"

    def policy_rows(self, proposal: Proposal) -> list[dict[str, Any]]:
        payload = proposal.payload or {}
        before = payload.get("before") or {}
        return [
            {
                "key": key,
                "before": _show(before[key]) if key in before else "",
                "after": _show(value),
            }
            for key, value in sorted((payload.get("policy") or {}).items())
        ]


KIND = Policy()
