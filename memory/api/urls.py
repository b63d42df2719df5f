"""API routes of the memory core (mounted under /api/v1/)."""

from lib.urls import actions, under

from . import batch, entries, maintenance, recall, revalidation

MEMORY = "memories/<slug:slug>"
ENTRY = f"{MEMORY}/entries/<str:entry_id>"

urlpatterns = [
    *under(
        "",
        ("memories", entries.MemoryCreateApi, "memory-create"),
        (MEMORY, entries.MemoryDetailApi, "memory-detail"),
        ("sources", entries.SourceCreateApi, "source-create"),
        ("sources/<str:name>", entries.SourceDetailApi, "source-detail"),
        ("sources/<str:name>/declarations", entries.SourceDeclareApi, "source-declare"),
    ),
    *under(
        MEMORY,
        ("/entries", entries.EntryListCreateApi, "entry-list"),
        # Before the entry routes: "batch" is not an entry id.
        ("/entries/batch", batch.EntryBatchApi, "entry-batch"),
    ),
    *under(ENTRY, ("", entries.EntryDetailApi, "entry-detail")),
    *actions(
        ENTRY,
        "entry",
        {
            "revise": entries.EntryReviseApi,
            "forget": entries.EntryForgetApi,
            "reactivate": entries.EntryReactivateApi,
            "quarantine": entries.EntryQuarantineApi,
            "release": entries.EntryReleaseApi,
            "pin": entries.EntryPinApi,
            "versions": entries.EntryVersionsApi,
            "confirm": revalidation.EntryConfirmApi,
            "require-reverification": revalidation.EntryRequireReverificationApi,
        },
    ),
    *under(
        ENTRY, ("/versions/<int:number>", entries.EntryVersionDetailApi, "entry-version-detail")
    ),
    *under(
        MEMORY,
        ("/sessions/<str:session_id>/end", entries.SessionEndApi, "session-end"),
        ("/relations", entries.RelationCreateApi, "relation-create"),
        ("/revisions", entries.RevisionListApi, "revision-list"),
        ("/revalidation/due", revalidation.DueListApi, "revalidation-due"),
        ("/revisions/<int:number>", entries.RevisionDetailApi, "revision-detail"),
        ("/search", recall.SearchApi, "memory-search"),
        ("/context-pack", recall.ContextPackApi, "memory-context-pack"),
        ("/maintenance/runs", maintenance.MaintenanceRunListApi, "maintenance-run-list"),
        ("/maintenance/<str:job>", maintenance.MaintenanceStartApi, "maintenance-start"),
    ),
    *under(
        "",
        (
            "maintenance/runs/<int:pk>",
            maintenance.MaintenanceRunDetailApi,
            "maintenance-run-detail",
        ),
    ),
    *under(MEMORY, ("/inventory", maintenance.InventoryApi, "memory-inventory")),
]
