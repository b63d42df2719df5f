"""REST endpoints of maintenance: start a job, list and read runs, read a Memory's inventory.

``POST /memories/{slug}/maintenance/{job}`` checks the role and the job name, then hands the job
to its Celery task. Without ``CELERY_BROKER_URL`` the task runs eagerly, so the 202 response
carries the finished run (``{run: id, job, dry_run, status: "finished", counts}``); with a broker
the run is recorded when the worker finishes, and the response says ``{run: null, task_id,
status: "queued"}``. A real run of a job its Memory's policy does not enable (``l1_enabled``,
``jobs.<job>.enabled``) answers 409 ``maintenance_disabled`` and writes nothing; a run while
another of the same job is going on that Memory answers 409 ``maintenance_running``. Both are
checked before the job is queued (``tasks.start_job``, which the maintenance page calls too), with
a broker as without one.
"""

from __future__ import annotations

from typing import Any, cast

from django.utils.functional import lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import StrictSerializer, parse, parse_query
from lib.identity import Actor
from lib.pagination import keyset_page
from lib.schema import limit_parameter
from lib.wording import listed

from .. import inventory, maintenance, selectors, tasks
from ..exceptions import Forbidden
from ..jobs import job_names, jobs
from ..models import MaintenanceRun
from ..visibility import hidden_uids
from .base import MemoryApiView

TAG = ["maintenance"]


class MaintenanceRunIn(StrictSerializer):
    dry_run = serializers.BooleanField(required=False, default=True)


class MaintenanceRunListQuery(StrictSerializer):
    job = serializers.ChoiceField(choices=(), required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        # The registered jobs, read when a request is parsed (every app is ready by then).
        cast(serializers.ChoiceField, fields["job"]).choices = job_names()
        return fields


def _start_summary() -> str:
    named = [job.name for job in jobs().values() if job.in_api_summary]
    return f"Run a maintenance job ({listed(named)}); dry run by default"


def _item_uids(item: dict[str, Any]) -> set[str]:
    return {item["entry_id"], *item.get("entries", [])}


def run_out(run: MaintenanceRun, actor: Actor) -> dict[str, Any]:
    """The run as the actor may see it: items naming any entry above its clearance are left
    out (counted in ``items_hidden``); at most one query."""
    uids: set[str] = set()
    for i in run.items:
        uids |= _item_uids(i)
    hidden = hidden_uids(run.memory_id, uids, actor)
    items = [i for i in run.items if not (_item_uids(i) & hidden)]
    return {
        "id": run.pk,
        "memory": run.memory.slug,
        "job": run.job,
        "dry_run": run.dry_run,
        "status": "finished",
        "proposals": list(run.counts.get("proposals", [])),
        "parameters": run.parameters,
        "counts": run.counts,
        "items": items,
        "items_hidden": len(run.items) - len(items),
        "items_truncated": run.items_truncated,
        "actor": {"type": run.actor_type, "id": run.actor_id, "label": run.actor_label},
        "correlation_id": run.correlation_id,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
    }


class MaintenanceStartApi(MemoryApiView):
    @extend_schema(
        tags=TAG,
        request=MaintenanceRunIn,
        # Read from the job registry when the schema is generated.
        summary=lazy(_start_summary, str)(),
    )
    def post(self, request: Request, slug: str, job: str) -> Response:
        actor, memory = self.scope(request, slug)
        if not actor.is_reviewer:
            raise Forbidden("Only reviewers and staff may run maintenance.")
        data = parse(MaintenanceRunIn, request)
        # Refused before it is queued rather than in a worker, where nobody would hear of it.
        started = tasks.start_job(memory, actor=actor, job=job, dry_run=data["dry_run"])
        if started.run is None:
            body: dict[str, Any] = {
                "run": None,
                "task_id": started.task_id,
                "job": job,
                "dry_run": data["dry_run"],
                "status": "queued",
            }
            return Response(body, status=status.HTTP_202_ACCEPTED)
        run = started.run
        return Response(
            {
                "run": run.pk,
                "job": job,
                "dry_run": run.dry_run,
                "status": "finished",
                "counts": run.counts,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class MaintenanceRunListApi(MemoryApiView):
    @extend_schema(
        tags=TAG,
        summary="A Memory's maintenance runs, newest first (cursor pages)",
        parameters=[
            OpenApiParameter("job", str, enum=lazy(job_names, list)()),
            OpenApiParameter("cursor", str),
            limit_parameter(),
        ],
    )
    def get(self, request: Request, slug: str) -> Response:
        actor = self.actor(request)
        if not actor.can_read:
            raise Forbidden("Your role may not read maintenance runs.")
        memory = selectors.get_memory(actor, slug)
        filters = parse_query(MaintenanceRunListQuery, request)
        qs = MaintenanceRun.objects.for_memory(memory).select_related("memory")
        if "job" in filters:
            qs = qs.filter(job=filters["job"])
        rows, cursor = keyset_page(qs, request.query_params, descending=True)
        return Response(
            {
                "items": [
                    {
                        "id": r.pk,
                        "job": r.job,
                        "dry_run": r.dry_run,
                        "status": "finished",
                        "counts": r.counts,
                        "proposals": list(r.counts.get("proposals", [])),
                        "started_at": r.started_at.isoformat(),
                        "finished_at": r.finished_at.isoformat(),
                    }
                    for r in rows
                ],
                "next_cursor": cursor,
            }
        )


class MaintenanceRunDetailApi(MemoryApiView):
    @extend_schema(tags=TAG, summary="Read a maintenance run")
    def get(self, request: Request, pk: int) -> Response:
        actor = self.actor(request)
        return Response(run_out(maintenance.get_run(actor, pk), actor))


class InventoryApi(MemoryApiView):
    @extend_schema(tags=TAG, summary="A Memory's inventory and alerts")
    def get(self, request: Request, slug: str) -> Response:
        return Response(inventory.inventory_for(self.actor(request), slug))
