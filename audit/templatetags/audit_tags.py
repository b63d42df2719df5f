"""Template helpers for the audit pages: links to every record a page mentions."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from audit import links as audit_links

register = template.Library()

#: Badge classes of head states (app.css): the withheld states each have their own, so a
#: candidate or a quarantined entry never looks like a merely stale one.
STATE_BADGES = {
    "active": "ok",
    "candidate": "candidate",
    "quarantined": "quarantined",
}


#: What an entry's validity (the lifecycle projection's) is called on a page, and its badge
#: class: only a current entry is a green "active"; a superseded one never looks current.
VALIDITY = {
    "current": ("active", "ok"),
    "superseded": ("superseded", "stale"),
    "inactive": ("inactive", "inactive"),
    "unresolved_conflict": ("active, in conflict", "stale"),
    "candidate": ("candidate", "candidate"),
    "quarantined": ("quarantined", "quarantined"),
}


@register.filter
def validity_label(validity: str) -> str:
    return VALIDITY.get(str(validity), (str(validity).replace("_", " "), ""))[0]


@register.filter
def validity_badge(validity: str) -> str:
    return VALIDITY.get(str(validity), ("", "stale"))[1]


@register.filter
def state_badge(state: str) -> str:
    """The badge class of a head state: ``ok``, ``candidate``, ``quarantined`` or ``stale``."""
    return STATE_BADGES.get(str(state), "stale")


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


@register.filter
def breakable(code: str) -> SafeString:
    """A dotted code (``proposal.changes_requested``) that may wrap after each dot in a narrow
    column rather than widen it."""
    return format_html_join(SafeString(".<wbr>"), "{}", ((part,) for part in str(code).split(".")))


#: An id or a code in running text that a browser would break at its hyphen: letters, digits
#: and underscores joined by ``-``, with a digit somewhere (``p1-a154faad011c``, ``PLAT-4711``,
#: ``2026-12-05``). A hyphenated word ("Instruction-like") is left to wrap as words do; an
#: underscore is no place to break a line anyway.
_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)\w+(?:-\w+)+(?![\w-])", re.ASCII)


@register.filter
def unbreakable_codes(text: str) -> SafeString:
    """A sentence whose ids and codes never break inside (a policy id at its hyphen): each is
    kept whole in a ``span.code`` (app.css); the rest wraps between words as usual."""
    text = str(text)
    parts: list[str] = []
    last = 0
    for match in _CODE.finditer(text):
        parts.append(escape(text[last : match.start()]))
        parts.append(format_html('<span class="code">{}</span>', match.group()))
        last = match.end()
    parts.append(escape(text[last:]))
    # Every part is escaped above.
    return mark_safe("".join(parts))


@register.filter
def readable_attributes(attributes: dict[str, Any]) -> str:
    """A revision's attribute changes in words — ``pinned: yes · pin category: durable
    decision`` — so the page never shows a stored dict as it is kept."""
    return " · ".join(
        f"{name.replace('_', ' ')}: {_readable_value(value)}" for name, value in attributes.items()
    )


def _readable_value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "none"
    return str(value).replace("_", " ")
