"""Browser routes of the audit trail (mounted at the site root)."""

from lib.urls import under

from . import views as audit_views

urlpatterns = [
    *under("audit/", ("", audit_views.audit_log, "audit-log")),
    *under(
        "memories/<slug:slug>/",
        ("entries/<str:entry_id>/", audit_views.entry_timeline, "audit-entry-timeline"),
        ("revisions/<int:number>/", audit_views.revision_detail, "audit-revision"),
    ),
]
