"""Admin: everything visible; append-only and derived models are read-only."""

from typing import Any

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from rest_framework_api_key.models import APIKey as LibraryApiKey

from . import models

# djangorestframework-api-key registers its own concrete key model, which authenticates nothing
# here (keys are ``models.ApiKey``, issued by ``manage.py issue_api_key``): its Add form made
# keys no request could use, listed as "API keys" beside the real ones.
if admin.site.is_registered(LibraryApiKey):
    admin.site.unregister(LibraryApiKey)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by actions: the admin may look, never change."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


#: The read-only models and their admin options, registered in this order.
READ_ONLY: dict[type[Model], dict[str, tuple[str, ...]]] = {
    models.Memory: {
        "list_display": ("slug", "name", "head", "created_at"),
        "search_fields": ("slug", "name"),
    },
    models.Source: {"list_display": ("name", "created_at")},
    models.SourceDeclaration: {
        "list_display": ("source", "version", "authority", "verification", "created_at"),
    },
    models.Entry: {
        "list_display": ("uid", "memory", "kind", "tier", "sensitivity", "created_at"),
        "list_filter": ("kind", "tier", "sensitivity"),
        "search_fields": ("uid",),
    },
    models.EntryVersion: {
        "list_display": ("entry", "number", "content_hash", "created_at"),
        "raw_id_fields": ("entry", "predecessor", "revision"),
    },
    models.Evidence: {"list_display": ("version", "source", "ref", "authority", "verification")},
    models.Revision: {
        "list_display": ("memory", "number", "kind", "actor_label", "recorded_at"),
        "list_filter": ("kind", "actor_type"),
    },
    models.RevisionChange: {"list_display": ("revision", "entry", "from_state", "to_state")},
    models.Head: {"list_display": ("entry", "memory", "state", "state_reason", "pinned")},
    models.LifecycleProjection: {
        "list_display": ("entry", "validity", "importance", "evidence_strength", "tier"),
        "list_filter": ("validity", "tier"),
    },
    models.Relation: {
        "list_display": ("kind", "from_entry", "to_entry", "authoritative", "retired_by"),
    },
}

for model, options in READ_ONLY.items():
    name = f"{model.__name__}Admin"
    admin.site.register(model, type(name, (ReadOnlyAdmin,), {"__module__": __name__, **options}))


@admin.register(models.ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "role", "clearance", "revoked", "created")
    fields = ("name", "role", "clearance", "memories", "owner", "revoked", "expiry_date")
    readonly_fields = ("role",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Keys are issued by the issue_api_key command, which shows the secret once.
        return False
