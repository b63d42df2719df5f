"""API routes of the memory core (mounted under /api/v1/)."""

from lib.urls import actions, under

from . import api, api_batch, api_maintenance, api_recall, api_revalidation

MEMORY = "memories/<slug:slug>"
ENTRY = f"{MEMORY}/entries/<str:entry_id>"

urlpatterns = [
    *under(
        "",
        ("memories", api.MemoryCreateApi, "memory-create"),
        (MEMORY, api.MemoryDetailApi, "memory-detail"),
        ("sources", api.SourceCreateApi, "source-create"),
        ("sources/<str:name>", api.SourceDetailApi, "source-detail"),
        ("sources/<str:name>/declarations", api.SourceDeclareApi, "source-declare"),
    ),
    *under(
        MEMORY,
        ("/entries", api.EntryListCreateApi, "entry-list"),
        # Before the entry routes: "batch" is not an entry id.
        ("/entries/batch", api_batch.EntryBatchApi, "entry-batch"),
    ),
    *under(ENTRY, ("", api.EntryDetailApi, "entry-detail")),
    *actions(
        ENTRY,
        "entry",
        {
            "revise": api.EntryReviseApi,
            "forget": api.EntryForgetApi,
            "reactivate": api.EntryReactivateApi,
            "quarantine": api.EntryQuarantineApi,
            "release": api.EntryReleaseApi,
            "pin": api.EntryPinApi,
            "versions": api.EntryVersionsApi,
            "confirm": api_revalidation.EntryConfirmApi,
            "require-reverification": api_revalidation.EntryRequireReverificationApi,
        },
    ),
    *under(ENTRY, ("/versions/<int:number>", api.EntryVersionDetailApi, "entry-version-detail")),
    *under(
        MEMORY,
        ("/sessions/<str:session_id>/end", api.SessionEndApi, "session-end"),
        ("/relations", api.RelationCreateApi, "relation-create"),
        ("/revisions", api.RevisionListApi, "revision-list"),
        ("/revalidation/due", api_revalidation.DueListApi, "revalidation-due"),
        ("/revisions/<int:number>", api.RevisionDetailApi, "revision-detail"),
        ("/search", api_recall.SearchApi, "memory-search"),
        ("/context-pack", api_recall.ContextPackApi, "memory-context-pack"),
        ("/maintenance/runs", api_maintenance.MaintenanceRunListApi, "maintenance-run-list"),
        ("/maintenance/<str:job>", api_maintenance.MaintenanceStartApi, "maintenance-start"),
    ),
    *under(
        "",
        (
            "maintenance/runs/<int:pk>",
            api_maintenance.MaintenanceRunDetailApi,
            "maintenance-run-detail",
        ),
    ),
    *under(MEMORY, ("/inventory", api_maintenance.InventoryApi, "memory-inventory")),
]
