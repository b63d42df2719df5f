"""The MCP endpoint (mounted at the site root: ``/mcp``)."""

from django.urls import path

from . import views

urlpatterns = [
    path("mcp", views.McpApi.as_view(), name="mcp"),
]
