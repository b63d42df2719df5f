"""Admin: proposals are visible, never changed here (only actions write them)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memory.admin import ReadOnlyAdmin

from .models import IdempotencyKey, Proposal, ProposalTarget


class ProposalTargetInline(admin.TabularInline):
    model = ProposalTarget
    extra = 0
    can_delete = False
    fields = ("position", "role", "entry", "version_number", "state", "content_hash")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
    list_display = ("id", "memory", "kind", "status", "submitted_by_label", "created_at")
    list_filter = ("status", "kind", "memory")
    search_fields = ("rationale", "submitted_by", "submitted_by_label")
    inlines = [ProposalTargetInline]


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(ReadOnlyAdmin):
    list_display = ("submitted_by", "key", "proposal", "created_at", "expires_at")
    search_fields = ("submitted_by", "key")
