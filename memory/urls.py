"""API routes of the memory core (mounted under /api/v1/)."""

from django.urls import path

from . import api, api_maintenance, api_recall

urlpatterns = [
    path("memories", api.MemoryCreateApi.as_view(), name="memory-create"),
    path("memories/<slug:slug>", api.MemoryDetailApi.as_view(), name="memory-detail"),
    path("sources", api.SourceCreateApi.as_view(), name="source-create"),
    path("sources/<str:name>", api.SourceDetailApi.as_view(), name="source-detail"),
    path(
        "sources/<str:name>/declarations",
        api.SourceDeclareApi.as_view(),
        name="source-declare",
    ),
    path("memories/<slug:slug>/entries", api.EntryListCreateApi.as_view(), name="entry-list"),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>",
        api.EntryDetailApi.as_view(),
        name="entry-detail",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/revise",
        api.EntryReviseApi.as_view(),
        name="entry-revise",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/forget",
        api.EntryForgetApi.as_view(),
        name="entry-forget",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/reactivate",
        api.EntryReactivateApi.as_view(),
        name="entry-reactivate",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/quarantine",
        api.EntryQuarantineApi.as_view(),
        name="entry-quarantine",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/release",
        api.EntryReleaseApi.as_view(),
        name="entry-release",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/pin",
        api.EntryPinApi.as_view(),
        name="entry-pin",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/versions",
        api.EntryVersionsApi.as_view(),
        name="entry-versions",
    ),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/versions/<int:number>",
        api.EntryVersionDetailApi.as_view(),
        name="entry-version-detail",
    ),
    path(
        "memories/<slug:slug>/sessions/<str:session_id>/end",
        api.SessionEndApi.as_view(),
        name="session-end",
    ),
    path("memories/<slug:slug>/relations", api.RelationCreateApi.as_view(), name="relation-create"),
    path("memories/<slug:slug>/revisions", api.RevisionListApi.as_view(), name="revision-list"),
    path(
        "memories/<slug:slug>/revisions/<int:number>",
        api.RevisionDetailApi.as_view(),
        name="revision-detail",
    ),
    path("memories/<slug:slug>/search", api_recall.SearchApi.as_view(), name="memory-search"),
    path(
        "memories/<slug:slug>/context-pack",
        api_recall.ContextPackApi.as_view(),
        name="memory-context-pack",
    ),
    path(
        "memories/<slug:slug>/maintenance/runs",
        api_maintenance.MaintenanceRunListApi.as_view(),
        name="maintenance-run-list",
    ),
    path(
        "memories/<slug:slug>/maintenance/<str:job>",
        api_maintenance.MaintenanceStartApi.as_view(),
        name="maintenance-start",
    ),
    path(
        "maintenance/runs/<int:pk>",
        api_maintenance.MaintenanceRunDetailApi.as_view(),
        name="maintenance-run-detail",
    ),
    path(
        "memories/<slug:slug>/inventory",
        api_maintenance.InventoryApi.as_view(),
        name="memory-inventory",
    ),
]
