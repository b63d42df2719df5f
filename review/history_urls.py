"""Browser routes of the history pages (mounted at the site root, right after the audit log):
an entry's page and a revision's page. Their names are the audit trail's, as the pages link to
each other and the log links to them."""

from lib.urls import under

from . import history_views

urlpatterns = [
    *under(
        "memories/<slug:slug>/",
        ("entries/<str:entry_id>/", history_views.entry_timeline, "audit-entry-timeline"),
        ("revisions/<int:number>/", history_views.revision_detail, "audit-revision"),
    ),
]
