"""Celery tasks of the memory core: thin, named, primitive arguments, idempotent.

- ``memory.l1_decay_scan(memory_id, dry_run=True, actor=None)`` → the run id. Without an actor
  (beat) it runs as the system actor. A real run on a Memory whose policy has ``l1_enabled``
  off raises ``MaintenanceDisabled`` (nothing written); a second run retires nothing new.
- ``memory.rebuild_projection(memory_id, dry_run=True, actor=None)`` → the run id.

``actor`` is :func:`actor_to_primitive` of the caller, so a worker records who asked. Without
``CELERY_BROKER_URL`` tasks run eagerly in-process and the run exists when ``delay`` returns.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from lib.correlation import correlation_scope

from . import maintenance
from .actors import Actor
from .models import Memory


def actor_to_primitive(actor: Actor) -> dict[str, Any]:
    return {
        "type": actor.type,
        "id": actor.id,
        "label": actor.label,
        "role": actor.role,
        "clearance": actor.clearance,
        "memory_ids": sorted(actor.memory_ids) if actor.memory_ids is not None else None,
        "on_behalf_of": actor.on_behalf_of,
    }


def actor_from_primitive(raw: dict[str, Any] | None, label: str) -> Actor:
    if raw is None:
        return Actor.system(label)
    ids = raw.get("memory_ids")
    return Actor(
        type=raw["type"],
        id=raw["id"],
        label=raw["label"],
        role=raw["role"],
        clearance=raw["clearance"],
        memory_ids=frozenset(ids) if ids is not None else None,
        on_behalf_of=raw.get("on_behalf_of", ""),
    )


@shared_task(name="memory.l1_decay_scan")
def l1_decay_scan(
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    with correlation_scope(correlation_id):
        run = maintenance.run_decay_scan(
            Memory.objects.get(pk=memory_id),
            actor=actor_from_primitive(actor, "l1_decay_scan"),
            dry_run=dry_run,
        )
    return run.pk


@shared_task(name="memory.rebuild_projection")
def rebuild_projection(
    memory_id: int,
    dry_run: bool = True,
    actor: dict[str, Any] | None = None,
    correlation_id: str | None = None,
) -> int:
    with correlation_scope(correlation_id):
        run = maintenance.run_projection_rebuild(
            Memory.objects.get(pk=memory_id),
            actor=actor_from_primitive(actor, "rebuild_projection"),
            dry_run=dry_run,
        )
    return run.pk


TASKS = {"l1": l1_decay_scan, "rebuild": rebuild_projection}
