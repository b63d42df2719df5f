"""Browser pages of a Memory's health: the Memory home (inventory with charts and the alert),
the maintenance run list and a run page with Dry run / Apply for reviewers.

Dry run / Apply start the job as the REST endpoint does (``tasks.start_job``): without a broker
it runs in the request and the page opens the run; with one it is queued, the list page says so
and links to the queued run's page (``maintenance/tasks/{job}/{task_id}/``), which shows it queued,
running, finished or skipped (and why) and, until then, polls for its status with htmx.

Reviewers, auditors and staff may read (403 otherwise; a Memory out of scope is 404); only
reviewers and staff may start a run. The figures come from ``memory.inventory`` (aggregate
queries); run items naming entries above the reader's clearance are left out exactly as over
the API (``api_maintenance.run_out``). Charts are drawn by the vendored Chart.js from data in a
``json_script``; every figure is also in a table, so the page works without JavaScript.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Max
from django.db.models.functions import TruncDate
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods, require_safe

from lib.errors import DomainError
from lib.pagination import keyset_page

from .. import inventory, maintenance, tasks
from ..actors import Actor
from ..api.maintenance import run_out
from ..jobs import DEFAULT_EVERY_HOURS, Job, get_job, job_enabled, job_policy, jobs
from ..models import (
    WITHHELD_STATES,
    Head,
    HeadState,
    MaintenanceRun,
    Memory,
    Revision,
    RevisionChange,
    sensitivities_up_to,
)
from .common import entry_label, page_reader

#: Days shown in the active / inactive over time chart.
HISTORY_DAYS = 90
#: Candidate and quarantined entries listed on the Memory home (the newest; the counts say how
#: many there are in all).
WITHHELD_SHOWN = 20
#: Seconds between two status requests of a queued or running run's page.
POLL_SECONDS = 2


def page_jobs() -> list[Job]:
    """The jobs a reviewer can start from the pages: those that file proposals for review
    first (the form's first choice), then the others, each group in the registry's order."""
    return sorted(jobs().values(), key=lambda job: not job.files_proposals)


def active_over_time(
    memory: Memory, active: int, inactive: int, days: int = HISTORY_DAYS
) -> list[dict[str, Any]]:
    """Active and inactive entry counts at the end of each of the last ``days`` days with a
    change, given today's counts (``active``, ``inactive``: the inventory's).

    Replayed backwards from today's counts over the revision changes of the window only, so
    the cost follows the Memory's recent activity, not its size: the newest revision recorded
    before the window is found by walking the ``(memory, number)`` index down from the head,
    and the changes after it are summed by day in one aggregate query. A day's point is the
    counts after its last revision."""
    start = timezone.localtime() - timedelta(days=days)
    start = start.replace(hour=0, minute=0, second=0, microsecond=0)
    before = (
        Revision.objects.filter(memory_id=memory.pk, recorded_at__lt=start)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    rows = (
        RevisionChange.objects.filter(
            revision__memory_id=memory.pk, revision__number__gt=before or 0
        )
        .exclude(from_state=F("to_state"))
        .annotate(day=TruncDate("revision__recorded_at"))
        .values("day", "from_state", "to_state")
        .annotate(n=Count("pk"))
        .order_by("-day")
    )
    series: dict[str, tuple[int, int]] = {}
    for r in rows:
        day = str(r["day"])
        # The counts at the end of a day are those before the changes of every later day.
        series.setdefault(day, (active, inactive))
        n = r["n"]
        active += n * ((r["from_state"] == HeadState.ACTIVE) - (r["to_state"] == HeadState.ACTIVE))
        inactive += n * (
            (r["from_state"] == HeadState.INACTIVE) - (r["to_state"] == HeadState.INACTIVE)
        )
    first = str(start.date())
    return [
        {"day": day, "active": a, "inactive": i}
        for day, (a, i) in sorted(series.items())
        if day >= first
    ]


def withheld_entries(
    actor: Actor, memory: Memory, limit: int = WITHHELD_SHOWN
) -> list[dict[str, Any]]:
    """The newest candidate and quarantined entries within the actor's clearance (one bounded
    query on the heads' ``(memory, state)`` index): state, reason, label and since when."""
    heads = (
        Head.objects.filter(
            memory=memory,
            state__in=WITHHELD_STATES,
            entry__sensitivity__in=sensitivities_up_to(actor.clearance),
        )
        .select_related("entry", "version", "revision")
        .order_by("-revision_id", "-entry_id")[:limit]
    )
    return [
        {
            "entry_id": h.entry.uid,
            "state": h.state,
            "reason": h.state_reason,
            "label": entry_label(h.version.body),
            "since": h.revision.recorded_at,
            "revision": h.revision.number,
        }
        for h in heads
    ]


@login_required
@require_safe
def memory_home(request: HttpRequest, slug: str) -> HttpResponse:
    actor, memory = page_reader(request, slug)
    figures = inventory.inventory(memory)
    charts = {
        "history": active_over_time(memory, figures["active"], figures["inactive"]),
        "importance": figures["importance"],
        "auto": figures["auto_deactivations"],
        "pending": figures["pending_proposals"],
        "findings": {
            "duplicate_of": figures["near_duplicates"]["duplicate_of"],
            "near_duplicate_of": figures["near_duplicates"]["near_duplicate_of"],
            "conflicts_with": figures["conflicts"],
        },
    }
    runs = list(MaintenanceRun.objects.for_memory(memory).order_by("-pk")[:5])
    return render(
        request,
        "memory/home.html",
        {
            "memory": memory,
            "inv": figures,
            "charts": charts,
            "runs": runs,
            "withheld": withheld_entries(actor, memory),
            "withheld_shown": WITHHELD_SHOWN,
            "can_run": actor.is_reviewer,
            "jobs": [job.name for job in page_jobs()],
            "nav": "memory",
        },
    )


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def maintenance_runs(request: HttpRequest, slug: str) -> HttpResponse:
    actor, memory = page_reader(request, slug)
    if request.method == "POST":
        return _start(request, actor, memory)
    qs = MaintenanceRun.objects.for_memory(memory).select_related("memory")
    job = request.GET.get("job", "")
    if job:
        qs = qs.filter(job=job)
    rows, cursor = keyset_page(qs, request.GET, descending=True)
    return render(
        request,
        "memory/maintenance.html",
        {
            "memory": memory,
            "job_rows": _job_rows(memory),
            "runs": rows,
            "next_cursor": cursor,
            "job": job,
            "jobs": [job.name for job in page_jobs()],
            "can_run": actor.is_reviewer,
            "nav": "memory",
        },
    )


def _start(request: HttpRequest, actor: Actor, memory: Memory) -> HttpResponse:
    if not actor.is_reviewer:
        raise PermissionDenied("Only reviewers and staff may run maintenance.")
    job = request.POST.get("job", "")
    dry_run = request.POST.get("mode") != "apply"
    try:
        started = tasks.start_job(memory, actor=actor, job=job, dry_run=dry_run)
    except DomainError as exc:
        messages.error(request, f"{job}: {exc.message}")
        return redirect("memory-maintenance", slug=memory.slug)
    if started.run is not None:
        return redirect("memory-maintenance-run", slug=memory.slug, pk=started.run.pk)
    page = _task_url(memory, job, started.task_id, dry_run)
    messages.success(
        request,
        format_html(
            '<code>{}</code> ({}) is queued. <a href="{}">Follow it on its run page</a>.',
            job,
            "dry run" if dry_run else "real run",
            page,
        ),
    )
    return redirect("memory-maintenance", slug=memory.slug)


def _job_rows(memory: Memory) -> list[dict[str, Any]]:
    """Each job the page offers: what it does, its schedule in the Memory's policy, and its
    last run (one query for every job's last run)."""
    last = {
        row["job"]: row
        for row in MaintenanceRun.objects.for_memory(memory)
        .values("job")
        .annotate(last_pk=Max("pk"), last_at=Max("finished_at"))
        .order_by()
    }
    policy = memory.policy or {}
    rows = []
    for spec in page_jobs():
        job = spec.name
        settings = job_policy(policy, job)
        if job_enabled(policy, job):
            hours = settings.get("every_hours", DEFAULT_EVERY_HOURS)
            schedule = f"every {hours:g} h" if isinstance(hours, (int, float)) else "daily"
        else:
            schedule = "off — runs only when started here or over the API"
        rows.append(
            {
                "job": job,
                "enabled": job_enabled(policy, job),
                "description": spec.description,
                "schedule": schedule,
                "last_pk": last.get(job, {}).get("last_pk"),
                "last_at": last.get(job, {}).get("last_at"),
            }
        )
    return rows


def _task_url(memory: Memory, job: str, task_id: str, dry_run: bool) -> str:
    path = reverse("memory-maintenance-task", args=[memory.slug, job, task_id])
    return f"{path}?mode={'dry_run' if dry_run else 'apply'}"


@login_required
@require_safe
def maintenance_task(request: HttpRequest, slug: str, job: str, task_id: str) -> HttpResponse:
    """The page of a run handed to a worker: queued, running or finished (then a link to the
    run's receipts). While not finished its status region asks again every
    :data:`POLL_SECONDS` (htmx); an htmx request gets that region only."""
    _, memory = page_reader(request, slug)
    if get_job(job) is None:
        raise Http404(f"No maintenance job {job}.")
    state, run, skipped_because = maintenance.task_state(memory, job, task_id)
    mode = request.GET.get("mode")
    context = {
        "memory": memory,
        "job": job,
        "state": state,
        "run": run,
        "skipped_because": skipped_because,
        "dry_run": run.dry_run if run is not None else mode != "apply",
        "mode_known": run is not None or mode in ("apply", "dry_run"),
        "poll_url": request.get_full_path(),
        "poll_seconds": POLL_SECONDS,
        "nav": "memory",
    }
    template = "memory/task.html"
    if getattr(request, "htmx", None):
        template += "#status"
    response = render(request, template, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_safe
def maintenance_run(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    actor, memory = page_reader(request, slug)
    run = MaintenanceRun.objects.for_memory(memory).select_related("memory").filter(pk=pk).first()
    if run is None:
        raise Http404(f"No maintenance run {pk} in this Memory.")
    out = run_out(run, actor)
    return render(
        request,
        "memory/run.html",
        {
            "memory": memory,
            "run": run,
            "out": out,
            "parameters": _figures(out["parameters"]),
            # The filed proposals have a section of their own.
            "counts": _figures({k: v for k, v in out["counts"].items() if k != "proposals"}),
            "items": [_item(i) for i in out["items"]],
            "can_run": actor.is_reviewer,
            "nav": "memory",
        },
    )


def _figures(values: dict[str, Any]) -> list[tuple[str, str]]:
    """A run's receipts or counts as (label, value) rows that read as words: "Min similarity"
    for ``min_similarity``, yes / no, lists and mappings spelt out (never Python's repr)."""
    return [(_label(name), _readable(value)) for name, value in sorted(values.items())]


#: Inputs longer than this (characters) are folded behind "Show the inputs", so no candidate
#: is taller than a phone's screen.
FOLD_INPUTS = 240


def _item(item: dict[str, Any]) -> dict[str, Any]:
    inputs = _inputs(item.get("inputs"))
    return {
        **item,
        "inputs": inputs,
        "fold_inputs": sum(len(n) + len(v) for n, v in inputs) > FOLD_INPUTS,
    }


def _inputs(value: Any) -> list[tuple[str, str]]:
    """A candidate's inputs as (label, value) rows (a value that is no mapping is one row)."""
    if isinstance(value, dict):
        return _figures(value)
    return [("Inputs", _readable(value))] if value not in (None, "", [], {}) else []


def _label(name: str) -> str:
    return str(name).replace("_", " ").strip().capitalize()


def _readable(value: Any, depth: int = 0) -> str:
    """One receipt value in words: "—" for nothing, yes / no, numbers and text as they are, a
    list joined with commas (pairs with "↔"), a mapping as "label: value; …"; JSON below two
    levels."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float, str)):
        return str(value)
    if depth >= 2:
        return _as_json(value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (list, tuple)) for v in value):
            return "; ".join(" ↔ ".join(_readable(x, depth + 2) for x in v) for v in value)
        return ", ".join(_readable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{_label(k)}: {_readable(v, depth + 1)}" for k, v in value.items())
    return str(value)


def _as_json(value: Any) -> str:
    """Text as it is; anything else as JSON (true, not Python's True); nothing as ''."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
