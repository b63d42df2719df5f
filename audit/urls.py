"""Browser route of the audit trail (mounted at the site root): the log. The history pages of an
entry and a revision it links to are review's (``review.history_urls``)."""

from lib.urls import under

from . import views as audit_views

urlpatterns = [
    *under("audit/", ("", audit_views.audit_log, "audit-log")),
]
