"""Admin: everything visible; append-only and derived models are read-only."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import (
    ApiKey,
    Entry,
    EntryVersion,
    Evidence,
    Head,
    LifecycleProjection,
    Memory,
    Relation,
    Revision,
    RevisionChange,
    Source,
    SourceDeclaration,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by actions: the admin may look, never change."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "head", "created_at")
    search_fields = ("slug", "name")


@admin.register(Source)
class SourceAdmin(ReadOnlyAdmin):
    list_display = ("name", "created_at")


@admin.register(SourceDeclaration)
class SourceDeclarationAdmin(ReadOnlyAdmin):
    list_display = ("source", "version", "authority", "verification", "created_at")


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ("uid", "memory", "kind", "tier", "sensitivity", "created_at")
    list_filter = ("kind", "tier", "sensitivity")
    search_fields = ("uid",)


@admin.register(EntryVersion)
class EntryVersionAdmin(ReadOnlyAdmin):
    list_display = ("entry", "number", "content_hash", "created_at")
    raw_id_fields = ("entry", "predecessor", "revision")


@admin.register(Evidence)
class EvidenceAdmin(ReadOnlyAdmin):
    list_display = ("version", "source", "ref", "authority", "verification")


@admin.register(Revision)
class RevisionAdmin(ReadOnlyAdmin):
    list_display = ("memory", "number", "kind", "actor_label", "recorded_at")
    list_filter = ("kind", "actor_type")


@admin.register(RevisionChange)
class RevisionChangeAdmin(ReadOnlyAdmin):
    list_display = ("revision", "entry", "from_state", "to_state")


@admin.register(Head)
class HeadAdmin(ReadOnlyAdmin):
    list_display = ("entry", "memory", "state", "state_reason", "pinned")


@admin.register(LifecycleProjection)
class LifecycleProjectionAdmin(ReadOnlyAdmin):
    list_display = ("entry", "validity", "importance", "evidence_strength", "tier")
    list_filter = ("validity", "tier")


@admin.register(Relation)
class RelationAdmin(ReadOnlyAdmin):
    list_display = ("kind", "from_entry", "to_entry", "authoritative", "retired_by")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "role", "clearance", "revoked", "created")
    fields = ("name", "role", "clearance", "memories", "owner", "revoked", "expiry_date")
    readonly_fields = ("role",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Keys are issued by the issue_api_key command, which shows the secret once.
        return False
