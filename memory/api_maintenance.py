"""REST endpoints of L1 maintenance: start a job, read a run, read a Memory's inventory.

``POST /memories/{slug}/maintenance/{job}`` checks the role and the job name, then hands the job
to its Celery task. Without ``CELERY_BROKER_URL`` the task runs eagerly, so the 202 response
carries the finished run (``{run: id, job, dry_run, status: "finished", counts}``); with a broker
the run is recorded when the worker finishes, and the response says ``{run: null, task_id,
status: "queued"}``. A real ``l1`` run on a Memory whose policy has ``l1_enabled`` off answers
409 ``maintenance_disabled`` and writes nothing.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from lib.api import ActorApiView, StrictSerializer, parse
from lib.correlation import current_correlation_id

from . import actions, inventory, maintenance, tasks
from .exceptions import Forbidden
from .models import MaintenanceRun
from .visibility import hidden_uids

TAG = ["maintenance"]


class MaintenanceRunIn(StrictSerializer):
    dry_run = serializers.BooleanField(required=False, default=True)


def run_out(run: MaintenanceRun, actor: Any) -> dict[str, Any]:
    """The run as the actor may see it: items naming entries above its clearance are left out
    (counted in ``items_hidden``); at most one query."""
    hidden = hidden_uids(run.memory_id, {i["entry_id"] for i in run.items}, actor)
    items = [i for i in run.items if i["entry_id"] not in hidden]
    return {
        "id": run.pk,
        "memory": run.memory.slug,
        "job": run.job,
        "dry_run": run.dry_run,
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


class MaintenanceStartApi(ActorApiView):
    @extend_schema(
        tags=TAG,
        request=MaintenanceRunIn,
        summary="Run a maintenance job (l1, rebuild); dry run by default",
    )
    def post(self, request: Request, slug: str, job: str) -> Response:
        actor = self.actor(request)
        memory = actions.get_memory(actor, slug)
        if not actor.is_reviewer:
            raise Forbidden("Only reviewers and staff may run maintenance.")
        data = parse(MaintenanceRunIn, request)
        maintenance.check_job(job)
        result = tasks.TASKS[job].delay(
            memory.pk,
            dry_run=data["dry_run"],
            actor=tasks.actor_to_primitive(actor),
            correlation_id=current_correlation_id(),
        )
        if not result.ready():
            body: dict[str, Any] = {
                "run": None,
                "task_id": result.id,
                "job": job,
                "dry_run": data["dry_run"],
                "status": "queued",
            }
            return Response(body, status=status.HTTP_202_ACCEPTED)
        run = MaintenanceRun.objects.select_related("memory").get(pk=result.get())
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


class MaintenanceRunDetailApi(ActorApiView):
    @extend_schema(tags=TAG, summary="Read a maintenance run")
    def get(self, request: Request, pk: int) -> Response:
        actor = self.actor(request)
        return Response(run_out(maintenance.get_run(actor, pk), actor))


class InventoryApi(ActorApiView):
    @extend_schema(tags=TAG, summary="A Memory's inventory and alerts")
    def get(self, request: Request, slug: str) -> Response:
        return Response(inventory.inventory_for(self.actor(request), slug))
