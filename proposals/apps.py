"""App config for proposals."""

from django.apps import AppConfig


class ProposalsConfig(AppConfig):
    name = "proposals"
    verbose_name = "Proposals"
