"""Template helpers for the audit pages: links to every record a page mentions."""

from __future__ import annotations

from typing import Any

from django import template

from audit import links as audit_links

register = template.Library()


@register.simple_tag
def entry_url(slug: str, uid: str) -> str:
    return audit_links.entry_url(slug, uid)


@register.simple_tag
def revision_url(slug: str, number: int) -> str:
    return audit_links.revision_url(slug, number)


@register.simple_tag
def page_url(kind: str, pk: Any) -> str | None:
    return audit_links.page_url(kind, pk)


@register.simple_tag
def log_url(**params: Any) -> str:
    return audit_links.log_url(**params)
