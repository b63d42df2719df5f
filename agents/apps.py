"""App config for the MCP surface."""

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "MCP for agents"
