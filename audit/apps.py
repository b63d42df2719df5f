"""App config for audit: the read side of the audit trail (no models of its own)."""

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit"
