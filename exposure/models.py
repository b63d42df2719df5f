"""One row per entry version a recall served: when, to which key, for which run, through which
surface. Written only by :func:`exposure.ledger.write` (off the request path), deleted only by the
retention purge (:func:`exposure.ledger.purge`)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from memory.models import Entry, Memory


class Via(models.TextChoices):
    SEARCH = "search", "REST search"
    CONTEXT_PACK = "context_pack", "REST Context Pack"
    MCP = "mcp", "MCP recall or context_pack"


class ExposureQuerySet(models.QuerySet["Exposure"]):
    def for_memory(self, memory: Memory) -> ExposureQuerySet:
        return self.filter(memory=memory)


class Exposure(models.Model):
    """Entry ``entry`` at version ``version`` was served at ``at`` to ``key`` (the actor id:
    ``key:<prefix>`` or ``user:<pk>``) for ``run_id`` (``""`` when the caller named no run)
    through ``via``. No body text: the version is the citation."""

    id = models.BigAutoField(primary_key=True)
    memory = models.ForeignKey(Memory, on_delete=models.PROTECT, related_name="+", db_index=False)
    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="+", db_index=False)
    version = models.PositiveIntegerField()
    at = models.DateTimeField(default=timezone.now)
    key = models.CharField(max_length=200)
    run_id = models.CharField(max_length=128, blank=True, default="")
    via = models.CharField(max_length=16, choices=Via.choices)

    objects = ExposureQuerySet.as_manager()

    class Meta:
        indexes = [
            # The list (newest first) and the purge (oldest first) of one Memory.
            models.Index(fields=["memory", "at"], name="exposure_memory_at"),
            # Who was served one version (operations, the entry page, ?entry=&version=).
            models.Index(fields=["entry", "version", "at"], name="exposure_entry_version"),
            # What one run was served (?run=).
            models.Index(fields=["memory", "run_id", "at"], name="exposure_memory_run"),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id} v{self.version} → {self.run_id or '-'} ({self.via})"
