"""Personal data that a Memory refuses to store (API.md ``policy.personal_data``).

Kinds: ``card`` (payment card numbers), ``government_id`` (national identity numbers),
``email``, ``phone``. A Memory refuses ``card`` and ``government_id`` unless its policy says
otherwise (``{"personal_data": {"refuse": [...]}}``; an empty list refuses nothing).

Candidates are found by their printed shape and then *validated* by maintained libraries, so
ordinary numbers in memories (build numbers, ports, hashes, timestamps) do not trip it:

* cards — 13 to 19 digits (single spaces or dashes between groups) on a major network's
  prefix and length, with a valid Luhn check digit (``stdnum.luhn``);
* government ids — the written forms of a set of national numbers, each validated by its
  python-stdnum module (check digits, reserved ranges): US SSN (dashes or spaces) and ITIN,
  Canadian SIN, Brazilian CPF, Spanish DNI/NIE, Italian codice fiscale, French NIR, Indian
  Aadhaar, Dutch BSN in groups, Swedish personnummer, Finnish HETU, Belgian national number,
  Czech/Slovak birth number, Irish PPS, UK National Insurance number; and *labelled* numbers:
  a national-id label (``SSN``, ``BSN``, ``PESEL``, ``Steuer-ID``, ``DNI``, ``NIR``, ``passport
  number`` … in the languages of the EU and the US, :data:`ID_LABELS`) followed by a number of
  id shape (six or more digits, in groups or bare) is refused *whatever its check digit*: a
  number shaped and named as a national id is one, even when a validator calls it invalid;
* email — Django's own ``validate_email`` on address-shaped tokens;
* phone — Google's libphonenumber (``phonenumbers.PhoneNumberMatcher``, VALID leniency) for
  numbers written in international form (``+`` and country code).

The text scanned is the admission's personal-data form (NFKC, invisible characters removed,
decimal digits of every script read as ASCII), so fullwidth or Arabic-Indic digits and
zero-width spaces do not hide a number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import phonenumbers
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from stdnum import luhn
from stdnum.be import nn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.cz import rc
from stdnum.es import dni, nie
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.ie import pps
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.se import personnummer
from stdnum.us import itin, ssn

KINDS = ("card", "government_id", "email", "phone")
DEFAULT_REFUSED: frozenset[str] = frozenset({"card", "government_id"})

_CARD = re.compile(r"(?<![\d.-])\d(?:[ .-]?\d){12,18}(?![\d])")
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
def _compact_valid(is_valid: Callable[[str], bool]) -> Callable[[str], bool]:
    """``is_valid`` on the number with its spaces and dashes removed."""
    return lambda number: is_valid(re.sub(r"[ -]", "", number))


#: UK National Insurance number: two prefix letters (not D, F, I, Q, U, V; O not second; not
#: the reserved pairs), six digits, suffix A–D.
_NINO = re.compile(
    r"(?<![\w])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w])"
)

_IDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), ssn.is_valid),
    (re.compile(r"(?<![\d-])(?<!\d )\d{3} \d{2} \d{4}(?![\d-]| \d)"), _compact_valid(ssn.is_valid)),
    (re.compile(r"(?<![\d-])9\d{2}[ -][5-9]\d[ -]\d{4}(?![\d-])"), _compact_valid(itin.is_valid)),
    (re.compile(r"(?<![\d-])\d{6}[-+]\d{4}(?![\d-])"), personnummer.is_valid),
    (re.compile(r"(?<![\w-])\d{6}[-+A-FU-Y]\d{3}[0-9A-Y](?![\w-])"), hetu.is_valid),
    (re.compile(r"(?<![\d.])\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}(?![\d])"), nn.is_valid),
    (re.compile(r"(?<![\d/])\d{6}/\d{3,4}(?![\d/])"), rc.is_valid),
    (re.compile(r"(?<![\w])\d{7}[A-W][A-IW]?(?![\w])"), pps.is_valid),
    (_NINO, lambda number: True),
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

#: Labels of national ids, in the languages of the EU and the US (lower case, matched
#: case-insensitively on word boundaries).
ID_LABELS: tuple[str, ...] = (
    # US
    "ssn",
    "social security number",
    "social security no",
    "social security",
    "itin",
    "taxpayer identification number",
    "tax id",
    "tax identification number",
    "tin",
    # UK, IE
    "national insurance number",
    "national insurance no",
    "nino",
    "ni number",
    "pps number",
    "ppsn",
    # generic
    "national id",
    "national identity number",
    "national identification number",
    "national id number",
    "identity number",
    "id card number",
    "passport number",
    "passport no",
    "personal identity number",
    "personal id number",
    "personal number",
    # NL, BE (a bare BSN is not looked for: docs/reliability.md says why)
    "bsn",
    "burgerservicenummer",
    "citizen service number",
    "citizen service no",
    "sofinummer",
    "sofi-nummer",
    "sofi nummer",
    "rijksregisternummer",
    "numéro national",
    "numero national",
    "insz",
    # DE, AT
    "steuer-id",
    "steuerid",
    "steuer id",
    "steueridentifikationsnummer",
    "idnr",
    "sozialversicherungsnummer",
    "personalausweisnummer",
    "svnr",
    # FR
    "nir",
    "numéro de sécurité sociale",
    "numero de securite sociale",
    "n° de sécu",
    "numéro insee",
    "numero insee",
    "insee",
    # ES, PT, IT
    "dni",
    "nie",
    "nif",
    "número de la seguridad social",
    "nss",
    "cartão de cidadão",
    "numero de identificação",
    "codice fiscale",
    # PL, CZ, SK, HU, RO, BG, HR, SI, GR
    "pesel",
    "rodné číslo",
    "rodne cislo",
    "taj szám",
    "cnp",
    "egn",
    "егн",
    "oib",
    "emšo",
    "emso",
    "amka",
    "αμκα",
    # Nordic, Baltic
    "personnummer",
    "fødselsnummer",
    "fodselsnummer",
    "cpr",
    "cpr-nummer",
    "henkilötunnus",
    "hetu",
    "isikukood",
    "asmens kodas",
    "personas kods",
    # BR, CA, IN (as before)
    "cpf",
    "sin",
    "social insurance number",
    "aadhaar",
)

#: Labels that are also ordinary words somewhere ("sin" is Spanish for "without", "nie" Polish
#: for "not"): matched in capitals only.
_CAPITALS_ONLY = frozenset({"sin", "tin", "nie", "nif", "nir", "nss", "cpr", "dni", "insee"})


def _label_alternative(label: str) -> str:
    pattern = re.escape(label).replace(r"\ ", r"[\s_-]*")
    return f"(?-i:{pattern.upper()})" if label in _CAPITALS_ONLY else pattern


_LABEL = re.compile(
    r"(?<![\w])(?:"
    + "|".join(_label_alternative(label) for label in sorted(ID_LABELS, key=len, reverse=True))
    + r")(?![\w])"
    # what may stand between a label and its number: "'s", ":", "#", "no.", "is", "was", "="
    + r"(?:\s*(?:#|:|=|-|–|\(|\)|is|was|of|no\.?|nr\.?|number|nummer|numéro|número)\s*|\s+){1,4}"
    + r"(?P<value>[A-Z0-9](?:[A-Z0-9]|[ ./-](?=[A-Z0-9])){5,24})",
    re.IGNORECASE,
)


def _labelled_id(text: str) -> bool:
    """A national-id label followed by a number of id shape: six or more digits (in groups or
    bare, letters allowed as in a DNI or NINO), not a date or a money amount."""
    for m in _LABEL.finditer(text):
        value = m.group("value")
        digits = sum(ch.isdigit() for ch in value)
        if digits >= 6 and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return True
    return False


_EMAIL = re.compile(r"[^\s<>()\[\],;:\"']+@[^\s<>()\[\],;:\"']+\.[^\s<>()\[\],;:\"']+")


def _is_card(candidate: str) -> bool:
    digits = re.sub(r"[ .-]", "", candidate)
    if not luhn.is_valid(digits):
        return False
    for (low, high), lengths in _NETWORKS:
        width = len(str(low))
        if len(digits) in lengths and low <= int(digits[:width]) <= high:
            return True
    return False


#: The fewest digits a card number (the card pattern: 13) and a national id (a UK NINO, or a
#: labelled number: 6) are written with: a text holding fewer is not searched for one. A batch
#: import joins each field's edges with two dozen others' (``memory.admission``), mostly prose.
#: ``tests/hardening/test_personal_data_digits.py`` holds every pattern to them.
MIN_CARD_DIGITS = 13
MIN_ID_DIGITS = 6


def _digit_count(text: str) -> int:
    return sum(map(str.isdigit, text))


def _find_cards(text: str) -> bool:
    if _digit_count(text) < MIN_CARD_DIGITS:
        return False
    return any(_is_card(m.group()) for m in _CARD.finditer(text))


def _find_government_ids(text: str) -> bool:
    if _digit_count(text) < MIN_ID_DIGITS:
        return False
    if _labelled_id(text):
        return True
    for pattern, is_valid in _IDS:
        for m in pattern.finditer(text):
            if is_valid(m.group()):
                return True
    return False


#: ``jane [at] example [dot] com``, ``jane(at)example(dot)com``.
_SPELLED_EMAIL = re.compile(
    r"[\w.+-]+\s*[\[({<]\s*at\s*[\])}>]\s*[\w-]+(?:\s*[\[({<]\s*dot\s*[\])}>]\s*[\w-]+)+",
    re.IGNORECASE,
)


def _find_emails(text: str) -> bool:
    if _SPELLED_EMAIL.search(text):
        return True
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
