"""Personal data that a Memory refuses to store (API.md ``policy.personal_data``).

Kinds: ``card`` (payment card numbers), ``government_id`` (national identity numbers),
``email``, ``phone``. A Memory refuses ``card`` and ``government_id`` unless its policy says
otherwise (``{"personal_data": {"refuse": [...]}}``; an empty list refuses nothing).

Candidates are found by their printed shape and then *validated* by maintained libraries, so
ordinary numbers in memories (build numbers, ports, hashes, timestamps) do not trip it:

* cards — 13 to 19 digits (single spaces or dashes between groups) on a major network's
  prefix and length, with a valid Luhn check digit (``stdnum.luhn``);
* government ids — the written forms of a set of national numbers, each validated by its
  python-stdnum module (check digits, reserved ranges): US SSN, Canadian SIN, Brazilian CPF,
  Spanish DNI/NIE, Italian codice fiscale, French NIR, Indian Aadhaar, Dutch BSN written in groups;
* email — Django's own ``validate_email`` on address-shaped tokens;
* phone — Google's libphonenumber (``phonenumbers.PhoneNumberMatcher``, VALID leniency) for
  numbers written in international form (``+`` and country code).

The text scanned is the admission scan form (NFKC, invisible characters removed), so fullwidth
digits or zero-width spaces do not hide a number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from stdnum import luhn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

KINDS = ("card", "government_id", "email", "phone")
DEFAULT_REFUSED: frozenset[str] = frozenset({"card", "government_id"})

_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])")
# (prefix ranges, lengths) of the major card networks.
_NETWORKS: tuple[tuple[tuple[int, int], tuple[int, ...]], ...] = (
    ((4, 4), (13, 16, 19)),  # Visa
    ((51, 55), (16,)),  # Mastercard
    ((2221, 2720), (16,)),  # Mastercard 2-series
    ((34, 34), (15,)),
    ((37, 37), (15,)),  # American Express
    ((6011, 6011), (16, 19)),
    ((644, 649), (16, 19)),
    ((65, 65), (16, 19)),  # Discover
    ((3528, 3589), (16, 19)),  # JCB
    ((300, 305), (14,)),
    ((36, 36), (14,)),
    ((38, 39), (14,)),  # Diners
    ((62, 62), (16, 17, 18, 19)),  # UnionPay
    ((50, 50), (12, 13, 14, 15, 16, 17, 18, 19)),
    ((56, 69), (12, 13, 14, 15, 16, 17, 18, 19)),  # Maestro
)

# (written shape, validator) per national number.
_IDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), ssn.is_valid),
    (re.compile(r"(?<![\d-])\d{3}[ -]\d{3}[ -]\d{3}(?![\d-])"), sin.is_valid),
    (re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d])"), cpf.is_valid),
    (re.compile(r"(?<![\w])\d{8}-?[A-Z](?![\w])"), dni.is_valid),
    (re.compile(r"(?<![\w])[XYZ]-?\d{7}-?[A-Z](?![\w])"), nie.is_valid),
    (
        re.compile(r"(?<![\w])[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z](?![\w])"),
        codicefiscale.is_valid,
    ),
    (
        re.compile(r"(?<![\d])[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\d])"),
        nir.is_valid,
    ),
    (re.compile(r"(?<![\d])[2-9]\d{3} \d{4} \d{4}(?![\d])"), aadhaar.is_valid),
    (re.compile(r"(?<![\d.])\d{4}\.\d{2}\.\d{3}(?![\d.])"), bsn.is_valid),
)

_EMAIL = re.compile(r"[^\s<>()\[\],;:\"']+@[^\s<>()\[\],;:\"']+\.[^\s<>()\[\],;:\"']+")


def _is_card(candidate: str) -> bool:
    digits = re.sub(r"[ -]", "", candidate)
    if not luhn.is_valid(digits):
        return False
    for (low, high), lengths in _NETWORKS:
        width = len(str(low))
        if len(digits) in lengths and low <= int(digits[:width]) <= high:
            return True
    return False


def _find_cards(text: str) -> bool:
    return any(_is_card(m.group()) for m in _CARD.finditer(text))


def _find_government_ids(text: str) -> bool:
    for pattern, is_valid in _IDS:
        for m in pattern.finditer(text):
            if is_valid(m.group()):
                return True
    return False


def _find_emails(text: str) -> bool:
    for m in _EMAIL.finditer(text):
        try:
            validate_email(m.group().rstrip("."))
        except ValidationError:
            continue
        return True
    return False


def _find_phones(text: str) -> bool:
    matcher = phonenumbers.PhoneNumberMatcher(text, None, leniency=phonenumbers.Leniency.VALID)
    return matcher.has_next()


_FINDERS: dict[str, Callable[[str], bool]] = {
    "card": _find_cards,
    "government_id": _find_government_ids,
    "email": _find_emails,
    "phone": _find_phones,
}


def find_personal_data(text: str, refuse: Iterable[str] = DEFAULT_REFUSED) -> list[str]:
    """The refused kinds of personal data found in ``text`` (in :data:`KINDS` order)."""
    wanted = set(refuse)
    return [kind for kind in KINDS if kind in wanted and _FINDERS[kind](text)]


def refused_kinds(policy: Any) -> frozenset[str]:
    """What a Memory's (already validated) policy refuses; the default when it says nothing."""
    if not isinstance(policy, dict):
        return DEFAULT_REFUSED
    section = policy.get("personal_data")
    if not isinstance(section, dict) or "refuse" not in section:
        return DEFAULT_REFUSED
    return frozenset(k for k in section["refuse"] if k in KINDS)


def clean_personal_data_policy(value: Any) -> dict[str, list[str]] | None:
    """The validated ``personal_data`` policy section, or None when it is malformed."""
    if not isinstance(value, dict) or set(value) - {"refuse"}:
        return None
    refuse = value.get("refuse", sorted(DEFAULT_REFUSED))
    if not isinstance(refuse, list) or not all(isinstance(k, str) and k in KINDS for k in refuse):
        return None
    return {"refuse": sorted(set(refuse), key=KINDS.index)}
