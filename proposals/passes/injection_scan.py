"""The injection scan (DESIGN §9): stored text that reads as instructions to a model → one
``quarantine`` proposal per entry, with the matched spans. It never quarantines by itself.

- Scans the head versions of active and inactive entries (candidates are scanned by their
  admission proposal's verification; quarantined entries are already withheld) with the
  versioned rules of ``memory.injection``, in keyset batches.
- Resumes where the last real run stopped (``counts.cursor``, ``base.resumed_scan``) and
  wraps around at the end, so
  a Memory larger than ``jobs.injection_scan.max_scan`` is covered over successive runs.
- An entry already proposed (in any status but stale: a rejected proposal is a reviewer's
  answer) is reported, not filed again. Dry run: the findings, nothing filed.
"""

from __future__ import annotations

from memory import injection
from memory.actors import Actor
from memory.models import EntryVersion, HeadState, LifecycleProjection, MaintenanceRun, Memory

from ..actions import quarantine_request
from ..models import ProposalKind
from . import base

NAME = "injection_scan"
SCANNED_STATES = (HeadState.ACTIVE, HeadState.INACTIVE)


def run_injection_scan(memory: Memory, *, actor: Actor, dry_run: bool = True) -> MaintenanceRun:
    """One injection scan of ``memory`` (see the module docstring).

    Preconditions: a maintainer, not inside a transaction. A real run needs no
    ``jobs.injection_scan.enabled`` (the beat schedule's switch). Effects: quarantine
    proposals filed by the system actor through the intake, and the run row.
    """
    run = base.start(memory, actor=actor, job=NAME, dry_run=dry_run)
    memory = run.memory
    run.parameters.update(rules_version=injection.RULES_VERSION)
    scope = LifecycleProjection.objects.filter(memory_id=memory.pk, state__in=SCANNED_STATES)
    for pks in base.resumed_scan(run, scope):
        run.count("scanned", len(pks))
        rows = EntryVersion.objects.filter(
            pk__in=scope.filter(entry_id__in=pks).values("version_id")
        )
        for entry_pk, uid, number, body in rows.values_list(
            "entry_id", "entry__uid", "number", "body"
        ).order_by("entry_id"):
            findings = injection.scan(body)
            if not findings:
                continue
            run.count("flagged")
            scan = injection.findings_json(findings)
            item = {
                "entry_id": uid,
                "reason": f"injection:{','.join(scan['rules'])}",  # type: ignore[arg-type]
                "inputs": {"version": number, **scan},
            }
            data = quarantine_request(memory, [(uid, number)], scan["rules"])  # type: ignore[arg-type]
            run.propose(data, kind=ProposalKind.QUARANTINE, entry_pks=[entry_pk], item=item)
    run.counts.setdefault("scanned", 0)
    run.counts.setdefault("flagged", 0)
    return run.finish()


JOB = base.pass_job(
    name=NAME,
    runner=run_injection_scan,
    description="Looks for text that reads as instructions to a model and files "
    "quarantine proposals.",
)
