"""API routes of the audit trail (mounted under /api/v1/)."""

from django.urls import path

from . import api as audit_api

urlpatterns = [
    path("audit/events", audit_api.AuditEventListApi.as_view(), name="audit-events"),
    path("audit/export", audit_api.AuditExportApi.as_view(), name="audit-export"),
]
