"""Admission checks for anything that will be stored: size limits, secrets and personal data.

Every stored text field goes through one of :func:`clean_body`, :func:`clean_text` or
:func:`clean_id` (ids, names, session ids, header values), and each of them scans for secrets
and refused personal data. The scan reads the text's *scan form* — NFKC-normalized (fullwidth
``ＡＫＩＡ`` reads ``AKIA``) with every invisible character removed (zero-width spaces and joiners,
soft hyphens, bidi controls, tags, variation selectors: Unicode's format characters and default
ignorables) — so such characters cannot split a secret past the detector; what is stored is
still the caller's NFC text.

Secrets are found with detect-secrets' *pattern* plugins (cloud keys, tokens, private keys,
credentials in URLs), Microsoft's maintained rule set and the fixed-prefix formats of the other
major providers, each read in several forms of the text — squeezed of look-alike separators and
marks, with confusable letters folded, and decoded from base64, hex and percent-encoding
(``memory.secret_rules``). detect-secrets' entropy heuristics are left out on purpose: memories
are full of commit hashes, UUIDs and ordinary prose, which those would flag. Personal data: see
``memory.personal_data``; which kinds are refused is the Memory's policy, for *every* field of a
write about that Memory (``refuse=`` or :func:`memory_policy`), not only its body.

Within one request (:func:`request_scope`, opened by
``memory.middleware.StoredTextScopeMiddleware``) a secret split across two fields —
``AKIAIOSF`` in the body, ``ODNN7EXAMPLE`` in a quote — is found too: the token-like edges of
every field are joined with those of the request's other fields and scanned again. A secret
split across *requests* is not (docs/reliability.md).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, NamedTuple

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import cache_bust, configure_settings_from_baseline
from django.conf import settings

from .exceptions import PersonalDataDetected, SecretDetected, TooLarge, ValidationFailed
from .personal_data import DEFAULT_REFUSED, find_personal_data, refused_kinds
from .secret_rules import ascii_digits, decoded, find_by_rules, forms, invisible
from .text import normalize_body

# Plugins that judge by entropy or flag ordinary content; everything else is a pattern detector.
_EXCLUDED_PLUGINS = {
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "IPPublicDetector",
    "KeywordDetector",
}


@lru_cache(maxsize=1)
def _plugins() -> tuple[dict[str, str], ...]:
    classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
    names = sorted(c.__name__ for c in classes if c.__name__ not in _EXCLUDED_PLUGINS)
    return tuple({"name": n} for n in names)


_configure_lock = threading.Lock()
_configured = False


def _configure_scanner() -> None:
    """detect-secrets reads its plugins from process-wide settings, and this module is their
    only user: they are set once per process (thread-safe), not swapped in and out around
    every scan (which cost an add ~0.5 ms and raced between threads)."""
    global _configured
    if _configured:
        return
    with _configure_lock:
        if not _configured:
            cache_bust()  # a fresh settings singleton, then this module's plugins in it
            configure_settings_from_baseline({"plugins_used": list(_plugins())})
            _configured = True


def scan_form(text: str) -> str:
    """What the detectors read: NFKC with invisible characters removed."""
    folded = unicodedata.normalize("NFKC", text)
    if folded.isascii():
        return folded
    return unicodedata.normalize("NFKC", "".join(ch for ch in folded if not invisible(ch)))


def personal_data_form(text: str) -> str:
    """What the personal-data detectors read: the scan form with every decimal digit of any
    script as an ASCII digit (``٠٧٨`` reads ``078``) and look-alike separators as spaces."""
    return ascii_digits(scan_form(text))


def find_secrets(text: str) -> list[str]:
    """Secret types found in any form of ``text`` (empty when clean): the text, its scan form,
    its squeezed and confusable-folded form, and the decodings of long base64, hex and
    percent-encoded runs (``memory.secret_rules.forms``)."""
    found: list[str] = []
    _configure_scanner()
    for form in forms(text, scan_form(text)):
        for line in form.splitlines() or [form]:
            for secret in scan_line(line):
                if secret.type not in found:
                    found.append(secret.type)
        for name in find_by_rules(form):
            if name not in found:
                found.append(name)
    return found


# --- One request's fields --------------------------------------------------------------------

#: The edges of the fields scanned so far in this request (None outside a request): each
#: field's token-like first and last runs, and its first and last 40 characters.
_REQUEST_EDGES: ContextVar[list[_Edges] | None] = ContextVar(
    "admission_request_edges", default=None
)
#: How many earlier fields' edges a field is joined with (a batch import is one request).
_MAX_EDGES = 24
#: The personal data each window of this request holds alone, by (window, refused kinds): a
#: window meets up to :data:`_MAX_EDGES` others in a batch and is read once. Kept for the
#: request only.
_WINDOW_FINDINGS: ContextVar[dict[tuple[str, frozenset[str]], frozenset[str]] | None] = ContextVar(
    "admission_window_findings", default=None
)
_HEAD = re.compile(r"^\S{1,120}")
_TAIL = re.compile(r"\S{1,120}$")
_WINDOW = 40


class _Edges(NamedTuple):
    head: str  # token-like first run ("" when a plain word)
    tail: str
    first: str  # first and last characters, spaces included (numbers, addresses)
    last: str


@contextmanager
def request_scope() -> Iterator[None]:
    """Within it, every field scanned is also joined with the request's other fields."""
    token = _REQUEST_EDGES.set([])
    windows = _WINDOW_FINDINGS.set({})
    try:
        yield
    finally:
        _WINDOW_FINDINGS.reset(windows)
        _REQUEST_EDGES.reset(token)


def _token_like(edge: str) -> bool:
    """An edge that could be part of a token: 4+ characters with a digit, a capital after a
    small letter, or ``_``/``-``/``.``/``@`` between letters — not a plain word."""
    return len(edge) >= 4 and bool(
        re.search(r"\d|[a-z][A-Z]|[A-Z]{3}|\w[_\-.+/=@]\w|^[_\-.+/=@]|[_\-.+/=@]$", edge)
    )


def _edge(pattern: re.Pattern[str], form: str) -> str:
    m = pattern.search(form)
    return m.group() if m and _token_like(m.group()) else ""


class _Joins(NamedTuple):
    # (left, right) edges that meet: a finding counts only where the two meet, never one
    # either side holds alone (that side's own scan answers for it).
    tokens: list[tuple[str, str]]  # token-like edges: what the secret scan reads
    windows: list[tuple[str, str]]  # 40-character windows: what the personal-data scan reads


def _joins(text: str) -> _Joins:
    """Where ``text`` meets the request's earlier fields (both orders), and ``text``'s edges
    remembered for the fields after it. Empty outside a request."""
    edges = _REQUEST_EDGES.get()
    if edges is None:
        return _Joins([], [])
    form = scan_form(text).strip()
    mine = _Edges(_edge(_HEAD, form), _edge(_TAIL, form), form[:_WINDOW], form[-_WINDOW:])
    out = _Joins([], [])
    for other in edges[-_MAX_EDGES:]:
        if other == mine:  # the same text checked twice
            continue
        for left, right in ((other.tail, mine.head), (mine.tail, other.head)):
            if left and right and len(left + right) >= 16:
                out.tokens.append((left, right))
        for left, right in ((other.last, mine.first), (mine.last, other.first)):
            if _may_meet_in_personal_data(left + right):
                out.windows.append((left, right))
    if mine not in edges:
        edges.append(mine)
    return out


#: What every kind of personal data the finders know is written with, besides digits: an
#: email's ``@``, and the brackets of one spelled out (``jane [at] example [dot] com``).
_PERSONAL_DATA_MARKS = frozenset("@[({<")


def _may_meet_in_personal_data(joined: str) -> bool:
    """Whether two fields' windows put together could hold personal data neither holds alone:
    a card, an id and a phone have digits, an email an ``@`` or a spelled one's brackets (read
    after NFKC, so fullwidth forms count)."""
    probe = unicodedata.normalize("NFKC", joined)
    return not _PERSONAL_DATA_MARKS.isdisjoint(probe) or any(map(str.isdigit, probe))


def check_no_secrets(field: str, text: str, joins: _Joins | None = None) -> None:
    if joins is None:
        joins = _joins(text)
    types = find_secrets(text)
    for left, right in joins.tokens:
        alone = {*find_secrets(left), *find_secrets(right)}
        types += [t for t in find_secrets(left + right) if t not in types and t not in alone]
    if types:
        raise SecretDetected(
            f"The {field} contains what looks like a secret ({', '.join(types)}); "
            "nothing was stored.",
            details={field: [f"secret detected: {t}" for t in types]},
        )


#: What the Memory being written refuses (:func:`memory_policy`); None: the default.
_POLICY_REFUSES: ContextVar[frozenset[str] | None] = ContextVar(
    "admission_policy_refuses", default=None
)


@contextmanager
def memory_policy(policy: Any) -> Iterator[None]:
    """Within it, every check that is given no ``refuse`` refuses what ``policy`` (a Memory's
    policy) refuses: a proposal's rationale, evidence and comments follow the Memory's rules."""
    token = _POLICY_REFUSES.set(refused_kinds(policy))
    try:
        yield
    finally:
        _POLICY_REFUSES.reset(token)


def refused(refuse: Iterable[str] | None) -> Iterable[str]:
    """``refuse`` when given, else the Memory policy in force (:func:`memory_policy`), else the
    default (card and government_id)."""
    if refuse is not None:
        return refuse
    in_force = _POLICY_REFUSES.get()
    return DEFAULT_REFUSED if in_force is None else in_force


def check_under_policy(memory: Any, field: str, text: str) -> None:
    """``text`` (already cleaned) against the personal data ``memory``'s policy refuses: for a
    field checked before its Memory was known (a decision's comment)."""
    if text:
        check_no_personal_data(field, text, refused_kinds(memory.policy))


def personal_data_forms(text: str) -> list[str]:
    """What the personal-data finders read: the text's personal-data form and those of its
    decodings (percent-encoding, HTML references, base64 and hex runs)."""
    out = [personal_data_form(text)]
    for plain in decoded(scan_form(text)):
        form = personal_data_form(plain)
        if form not in out:
            out.append(form)
    return out


def _found_in_window(window: str, wanted: frozenset[str]) -> frozenset[str]:
    """The personal data in one field's window alone, read once per request
    (:data:`_WINDOW_FINDINGS`)."""
    seen = _WINDOW_FINDINGS.get()
    if seen is not None and (window, wanted) in seen:
        return seen[(window, wanted)]
    found = frozenset(find_personal_data(personal_data_form(window), wanted))
    if seen is not None:
        seen[(window, wanted)] = found
    return found


def check_no_personal_data(
    field: str, text: str, refuse: Iterable[str] | None = None, joins: _Joins | None = None
) -> None:
    """Refuse ``text`` when it holds personal data of a refused kind (``refuse``: the Memory's
    ``policy.personal_data.refuse``; ``None``: see :func:`refused`) — in any of its forms, or
    where it meets another field of the request (``joins``)."""
    wanted = frozenset(refused(refuse))
    kinds: list[str] = []
    if wanted:
        for form in personal_data_forms(text):
            kinds += [k for k in find_personal_data(form, wanted) if k not in kinds]
        for left, right in joins.windows if joins else []:
            alone = _found_in_window(left, wanted) | _found_in_window(right, wanted)
            met = find_personal_data(personal_data_form(left + right), wanted)
            kinds += [k for k in met if k not in kinds and k not in alone]
    if kinds:
        raise PersonalDataDetected(
            f"The {field} contains personal data ({', '.join(kinds)}); nothing was stored.",
            details={field: [f"personal data detected: {k}" for k in kinds]},
        )


#: Bidirectional embedding, override and isolate controls (LRE, RLE, PDF, LRO, RLO; LRI, RLI,
#: FSI, PDI): they reorder how the text around them is displayed, so ``"Team \u202eevil"``
#: shows as something else in the pages and in exports ("Trojan Source"). The implicit marks
#: (LRM U+200E, RLM U+200F, ALM U+061C) only set the direction of neutral characters and are
#: written in ordinary right-to-left text: they stay.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def check_no_bidi_controls(field: str, text: str) -> None:
    """400 ``invalid`` naming the field and the first bidirectional control (by code point and
    name): refused rather than stripped, so what is stored is what the caller sent."""
    found = BIDI_CONTROLS.search(text)
    if found is not None:
        char = found.group()
        raise ValidationFailed(
            f"The {field} contains a bidirectional control character.",
            details={
                field: [
                    f"Contains U+{ord(char):04X} ({unicodedata.name(char)}), which changes how "
                    "the text around it is displayed; remove it."
                ]
            },
        )


def check_stored_text(field: str, text: str, refuse: Iterable[str] | None = None) -> None:
    """Everything a stored text must pass: no secret, no refused personal data (a secret behind
    a bidi control is reported as the secret), no bidirectional control."""
    joins = _joins(text)
    check_no_secrets(field, text, joins)
    check_no_personal_data(field, text, refuse, joins)
    check_no_bidi_controls(field, text)


def clean_body(body: Any, *, field: str = "body", refuse: Iterable[str] | None = None) -> str:
    """Normalize and check a body: non-empty, within the byte limit, no secrets, no refused
    personal data (``refuse``: see :func:`check_no_personal_data`)."""
    if not isinstance(body, str):
        raise ValidationFailed(details={field: ["Must be a string."]})
    normalized = normalize_body(body)
    if not normalized:
        raise ValidationFailed(details={field: ["Must not be empty."]})
    size = len(normalized.encode("utf-8"))
    limit = settings.STEWARD_MAX_BODY_BYTES
    if size > limit:
        raise TooLarge(
            f"The {field} is {size} bytes; the limit is {limit} UTF-8 bytes.",
            details={field: [f"At most {limit} UTF-8 bytes (got {size})."]},
        )
    check_stored_text(field, normalized, refuse)
    return normalized


def clean_text(
    value: Any,
    *,
    field: str,
    required: bool = False,
    limit: int | None = None,
    refuse: Iterable[str] | None = None,
) -> str:
    """A reason, comment, name or quote: normalized, within the character limit, no secrets, no
    refused personal data."""
    if value is None or value == "":
        if required:
            raise ValidationFailed(details={field: ["This field is required."]})
        return ""
    if not isinstance(value, str):
        raise ValidationFailed(details={field: ["Must be a string."]})
    normalized = normalize_body(value)
    if required and not normalized:
        raise ValidationFailed(details={field: ["This field is required."]})
    limit = limit or settings.STEWARD_MAX_REASON_CHARS
    if len(normalized) > limit:
        raise TooLarge(
            f"The {field} is {len(normalized)} characters; the limit is {limit}.",
            details={field: [f"At most {limit} characters."]},
        )
    check_stored_text(field, normalized, refuse)
    return normalized


def clean_id(value: Any, *, field: str) -> str:
    """An id, name or session id: printable ASCII within the id limit, and — because ids are
    stored and echoed too — no secret. Personal data is looked for in free text only: the
    server's own entry ids are random hex, and a run of 16 of its digits can pass a Luhn check."""
    if not isinstance(value, str) or not value:
        raise ValidationFailed(details={field: ["Must be a non-empty string."]})
    if not value.isascii() or not value.isprintable() or len(value) > settings.STEWARD_MAX_ID_CHARS:
        raise ValidationFailed(
            details={
                field: [f"Printable ASCII, at most {settings.STEWARD_MAX_ID_CHARS} characters."]
            }
        )
    check_no_secrets(field, value)
    return value


def clean_idempotency_key(value: Any, *, field: str = "Idempotency-Key") -> str | None:
    """An ``Idempotency-Key`` as stored, or ``None``; 400 ``invalid`` / 422 ``secret_detected``
    naming ``field`` (the REST header, or the argument that carries the key over MCP)."""
    if value is None or value == "":
        return None
    if (
        not isinstance(value, str)
        or len(value) > 128
        or not value.isascii()
        or not value.isprintable()
    ):
        raise ValidationFailed(details={field: ["Printable ASCII, at most 128 characters."]})
    # Stored with the idempotency record.
    check_no_secrets(field, value)
    return value


def check_stored_json(field: str, value: Any, refuse: Iterable[str] | None = None) -> None:
    """Every string of a JSON value (keys too) as a stored text, each and all joined: a policy's
    glossary, a webhook URL, a saved view's filters."""
    strings: list[tuple[str, str]] = []

    def walk(path: str, node: Any) -> None:
        if isinstance(node, str):
            strings.append((path, node))
        elif isinstance(node, dict):
            for key, item in node.items():
                walk(f"{path}.{key}", str(key))
                walk(f"{path}.{key}", item)
        elif isinstance(node, list | tuple):
            for i, item in enumerate(node):
                walk(f"{path}[{i}]", item)

    walk(field, value)
    for path, text in strings:
        check_stored_text(path, text, refuse)
    check_stored_text(field, "\n".join(text for _, text in strings), refuse)
