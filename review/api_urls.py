"""API routes of the review app (mounted under /api/v1/): the audit trail."""

from django.urls import path

from . import audit_api

urlpatterns = [
    path("audit/events", audit_api.AuditEventListApi.as_view(), name="audit-events"),
    path("audit/export", audit_api.AuditExportApi.as_view(), name="audit-export"),
]
