"""Browser routes of the audit trail (mounted at the site root)."""

from django.urls import path

from . import views as audit_views

urlpatterns = [
    path("audit/", audit_views.audit_log, name="audit-log"),
    path(
        "memories/<slug:slug>/entries/<str:entry_id>/",
        audit_views.entry_timeline,
        name="audit-entry-timeline",
    ),
    path(
        "memories/<slug:slug>/revisions/<int:number>/",
        audit_views.revision_detail,
        name="audit-revision",
    ),
]
