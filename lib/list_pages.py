"""What the filtered list pages (the audit log, the entry browser) share: the "Load more" link
of a keyset page, and the part of the page an htmx request renders."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest


def page_links(request: HttpRequest, f: Any, cursor: str | None) -> dict[str, Any]:
    """The context of the page's "Load more" link: ``f`` (the page's filters) writes its query
    string with the next cursor and the page size asked for."""
    return {
        "next_cursor": cursor,
        "next_query": f.query_string(cursor=cursor or "", limit=request.GET.get("limit", "")),
        "first_page": not request.GET.get("cursor"),
    }


def list_template(request: HttpRequest, template: str, results_target: str) -> str:
    """``template``, or the partial an htmx request targets: ``#results`` when the filter form
    replaces ``results_target``, ``#rows`` when "Load more" appends rows."""
    target = getattr(request, "htmx", None) and request.htmx.target  # type: ignore[attr-defined]
    if target == results_target:
        return template + "#results"
    if target == "load-more":
        return template + "#rows"
    return template
