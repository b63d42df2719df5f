"""What the filtered list pages (the audit log, the entry browser, the review inbox) share: the
filters in the URL, the "Load more" link of a keyset page, and the part of the page an htmx
request renders."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar
from urllib.parse import urlencode

from django.http import HttpRequest


@dataclass
class UrlFilter:
    """A list page's filters, all in its URL (every view a shareable link that works without
    JavaScript): each field of a subclass is a query parameter, left out while it has its
    default value, but those named in :attr:`not_in_url`."""

    #: The values refused, per parameter (the page answers 422 and says why).
    errors: dict[str, list[str]] = field(default_factory=dict)
    #: Fields that are no query parameter (found from one, or kept for the page).
    not_in_url: ClassVar[tuple[str, ...]] = ()

    def params(self, **override: Any) -> dict[str, str]:
        """The non-default parameters, in field order, then ``override`` (an empty or None
        override drops the parameter)."""
        values = {
            f.name: "" if getattr(self, f.name) == f.default else getattr(self, f.name)
            for f in fields(self)
            if f.name != "errors" and f.name not in self.not_in_url
        }
        values.update({k: str(v) if v is not None else "" for k, v in override.items()})
        return {k: v for k, v in values.items() if v}

    def query_string(self, **override: Any) -> str:
        """:meth:`params` as a query string (without the "?")."""
        return urlencode(self.params(**override))

    @property
    def active(self) -> bool:
        """Whether any filter is set."""
        return bool(self.params())


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
