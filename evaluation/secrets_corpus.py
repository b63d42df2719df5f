"""A labelled corpus for the stored-text scan (``manage.py evaluate secrets`` and
``bench/secret_probe.py``): what must be refused, and ordinary technical memories that must not.

Three groups, built deterministically (a fixed seed; every token is fake but has its provider's
documented shape):

- ``secret`` — credentials of 45 token types (cloud keys, forge and registry tokens, AI provider
  keys, SaaS tokens, private keys, credentials in URLs and assignments), each plain, then a
  subset behind every *disguise* the probe of issue 38 used (U+2028, no-break and other Unicode
  spaces, U+2800, a combining accent, a Cyrillic or Greek look-alike, zero-width characters,
  fullwidth letters, soft hyphens, tags) and every *encoding* (base64 standard and URL-safe,
  hex, ``\\x`` escapes, percent-encoding, HTML references, base64 of a percent-encoded line);
- ``personal`` — national ids of the US and the EU (SSN dashed, spaced, in Arabic-Indic or
  fullwidth digits, or labelled with a failing check digit; ITIN; BSN bare or dotted; PESEL,
  Steuer-ID, NIR, DNI, NIE, codice fiscale, personnummer, HETU, Belgian, Czech, Irish, UK
  numbers) and payment cards in every grouping and script, plus email addresses and phone
  numbers for a Memory whose policy refuses them (``policy`` = ``email_phone``);
- ``control`` — ordinary memories full of ids, hashes, UUIDs, URLs, version strings, commit
  SHAs, ports, timestamps, digests, base64 of plain words, non-Latin prose, and sentences that
  *talk about* passwords, tokens and SSNs without holding one.

Each item: ``id``, ``group``, ``kind`` (token type, disguise, id kind …), ``text`` and, for
personal items, ``policy`` (``default`` or ``email_phone``). The texts were written by the
people who wrote the detector: the figures are a regression check, not a general accuracy claim.
"""

from __future__ import annotations

import base64
import random
import string
from functools import cache
from typing import NamedTuple
from urllib.parse import quote

SECRET, PERSONAL, CONTROL = "secret", "personal", "control"


class Item(NamedTuple):
    id: str
    group: str
    kind: str
    text: str
    policy: str = "default"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
LOWER_HEX = "0123456789abcdef"
UPPER_B32 = string.ascii_uppercase + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def tokens(rng: random.Random) -> dict[str, str]:
    """One fake token of each type, in its documented shape."""
    r = lambda a, n: _rand(rng, a, n)  # noqa: E731
    return {
        "aws_access_key": "AKIA" + r(UPPER_B32, 16),
        "aws_session_key": "ASIA" + r(UPPER_B32, 16),
        "aws_secret_assignment": "aws_secret_access_key = " + r(ALNUM + "/+", 40),
        "github_classic": "ghp_" + r(ALNUM, 36),
        "github_oauth": "gho_" + r(ALNUM, 36),
        "github_fine_grained": "github_pat_11" + r(ALNUM, 20) + "_" + r(ALNUM, 59),
        "gitlab_pat": "glpat-" + r(ALNUM + "-_", 20),
        "google_api_key": "AIza" + r(ALNUM + "-_", 35),
        "google_oauth": "ya29." + r(ALNUM + "-_", 60),
        "npm": "npm_" + r(ALNUM, 36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "-_", 60),
        "anthropic": "sk-ant-api03-" + r(ALNUM + "-_", 93) + "AA",
        "openai_project": "sk-proj-" + r(ALNUM + "-_", 64),
        "openai_legacy": "sk-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20),
        "vault": "hvs." + r(ALNUM + "-_", 90),
        "digitalocean": "dop_v1_" + r(LOWER_HEX, 64),
        "shopify": "shpat_" + r(LOWER_HEX, 32),
        "age": "AGE-SECRET-KEY-1" + r(BECH32, 58),
        "stripe_live": "sk_live_" + r(ALNUM, 24),
        "stripe_restricted": "rk_live_" + r(ALNUM, 24),
        "slack_bot": "xoxb-"
        + r(string.digits, 12)
        + "-"
        + r(string.digits, 13)
        + "-"
        + r(ALNUM, 24),
        "slack_webhook": "https://hooks.slack.com/services/T"
        + r(UPPER_B32, 8)
        + "/B"
        + r(UPPER_B32, 8)
        + "/"
        + r(ALNUM, 24),
        "sendgrid": "SG." + r(ALNUM + "-_", 22) + "." + r(ALNUM + "-_", 43),
        "twilio": "SK" + r(LOWER_HEX, 32),
        "hugging_face": "hf_" + r(string.ascii_letters, 34),
        "replicate": "r8_" + r(ALNUM, 37),
        "groq": "gsk_" + r(ALNUM, 52),
        "databricks": "dapi" + r(LOWER_HEX, 32),
        "docker_hub": "dckr_pat_" + r(ALNUM + "-_", 27),
        "linear": "lin_api_" + r(ALNUM, 40),
        "notion": "ntn_" + r(ALNUM, 46),
        "atlassian": "ATATT3xFfGF0" + r(ALNUM + "-_", 180),
        "sentry": "sntrys_" + r(ALNUM, 64),
        "doppler": "dp.st.prd." + r(ALNUM, 43),
        "new_relic": "NRAK-" + r(UPPER_B32, 27),
        "postman": "PMAK-" + r(LOWER_HEX, 24) + "-" + r(LOWER_HEX, 34),
        "alibaba": "LTAI" + r(ALNUM, 20),
        "telegram_bot": r(string.digits, 10) + ":AA" + r(ALNUM + "-_", 33),
        "discord_bot": "M" + r(ALNUM, 23) + "." + r(ALNUM, 6) + "." + r(ALNUM + "-_", 27),
        "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
        + r(ALNUM + "-_", 43),
        "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + r(ALNUM, 58),
        "url_password": "https://deploy:" + r(ALNUM, 14) + "@ci.example.com/hooks/build",
        "url_query_token": "https://api.example.com/v1/export?access_token=" + r(ALNUM, 32),
        "password_assignment": "db password = "
        + r(string.ascii_letters, 6)
        + r(string.digits, 3)
        + "!x",
        "azure_storage": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + r(ALNUM + "+/", 86)
        + "==",
    }


#: Sentences a token is written into.
FRAMES = (
    "The CI key is {} — rotate it after the release.",
    "Use {} for the nightly export job",
    "{}",
    "staging credentials: {}",
    "Note from the on-call handover: {} (do not share)",
)

#: Characters or changes that hide a token from a naive scan (issue 38's probe).
DISGUISES: dict[str, object] = {
    "line_separator": "\u2028",
    "no_break_space": "\u00a0",
    "narrow_nbsp": "\u202f",
    "ideographic_space": "\u3000",
    "braille_blank": "\u2800",
    "combining_acute": "\u0301",
    "zero_width_space": "\u200b",
    "zero_width_joiner": "\u200d",
    "word_joiner": "\u2060",
    "soft_hyphen": "\u00ad",
    "bom": "\ufeff",
    "tag_char": "\U000e0041",
    "cyrillic_lookalike": "cyrillic",
    "greek_lookalike": "greek",
    "fullwidth": "fullwidth",
}

_CYRILLIC = {"A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "K": "К", "M": "М", "O": "О",
             "P": "Р", "T": "Т", "X": "Х", "a": "а", "c": "с", "e": "е", "o": "о", "p": "р",
             "x": "х", "y": "у"}  # fmt: skip
_GREEK = {"A": "Α", "B": "Β", "E": "Ε", "H": "Η", "I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν",
          "O": "Ο", "P": "Ρ", "T": "Τ", "X": "Χ", "Z": "Ζ", "o": "ο"}  # fmt: skip


def disguise(token: str, how: str) -> str:
    if how in ("cyrillic", "greek"):
        table = _CYRILLIC if how == "cyrillic" else _GREEK
        out, done = [], 0
        for ch in token:
            if ch in table and done < 2:
                out.append(table[ch])
                done += 1
            else:
                out.append(ch)
        return "".join(out)
    if how == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in token)
    cut = max(4, len(token) // 3)
    return token[:cut] + how + token[cut:]


ENCODINGS = {
    "base64": lambda t: base64.b64encode(t.encode()).decode(),
    "base64_urlsafe": lambda t: base64.urlsafe_b64encode(t.encode()).decode().rstrip("="),
    "hex": lambda t: t.encode().hex(),
    "hex_escapes": lambda t: "".join(f"\\x{b:02x}" for b in t.encode()),
    "percent_all": lambda t: "".join(f"%{b:02X}" for b in t.encode()),
    "percent_query": lambda t: "https://example.com/cb?state=" + quote(f"key: {t}", safe=""),
    "html_entities": lambda t: "".join(f"&#{ord(c)};" for c in t),
    "base64_of_percent": lambda t: base64.b64encode(quote(t, safe="").encode()).decode(),
}

#: Tokens the disguises and encodings are applied to (a spread of shapes).
DISGUISED = (
    "aws_access_key",
    "github_classic",
    "github_fine_grained",
    "google_api_key",
    "anthropic",
    "slack_bot",
    "stripe_live",
    "npm",
    "vault",
    "digitalocean",
    "shopify",
    "age",
    "openai_project",
    "hugging_face",
)


# --- Personal data ---------------------------------------------------------------------------

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")

PERSONAL_TEXTS: tuple[tuple[str, str], ...] = (
    ("ssn_dashed", "Customer SSN 536-90-4399 on the refund ticket"),
    ("ssn_dashed_unlabelled", "Refund approved for 536-90-4399 yesterday"),
    ("ssn_spaced", "Employee record: 212 67 4482"),
    ("ssn_spaced_labelled", "SSN 212 67 4482 confirmed by HR"),
    ("ssn_nbsp", "SSN 536\u00a090\u00a04399"),
    ("ssn_arabic_indic", "SSN " + "536-90-4399".translate(ARABIC_INDIC)),
    ("ssn_devanagari", "SSN " + "536-90-4399".translate(DEVANAGARI)),
    ("ssn_fullwidth", "SSN " + "536-90-4399".translate(FULLWIDTH)),
    ("ssn_zero_width", "SSN 536\u200b-90-\u200b4399"),
    ("ssn_labelled_invalid", "Jane's SSN is 078-05-1120"),
    ("ssn_labelled_bare", "her social security number: 078051120"),
    ("ssn_labelled_invalid_area", "SSN: 000-12-3456 per the intake form"),
    ("itin", "ITIN 912-70-1234 for the contractor"),
    ("bsn_bare_labelled", "BSN 111222333 van de klant"),
    ("bsn_colon", "bsn: 123456782"),
    ("bsn_dotted", "Burgerservicenummer 1112.22.333"),
    ("bsn_dotted_unlabelled", "klantnummer 1112.22.333 gewijzigd"),
    ("bsn_invalid_labelled", "BSN 123456789 (typo?)"),
    ("pesel", "PESEL 44051401359 pacjenta"),
    ("steuer_id", "Steuer-ID 12 345 678 901 des Mitarbeiters"),
    ("nir", "NIR 2 55 08 14 168 025 38"),
    ("nir_labelled", "numéro de sécurité sociale : 1 84 12 76 451 089 46"),
    ("dni", "DNI 12345678Z del cliente"),
    ("nie", "NIE X1234567L"),
    ("codice_fiscale", "Codice fiscale RSSMRA85T10A562S"),
    ("codice_fiscale_unlabelled", "RCCMNL83S18D969H on the contract"),
    ("personnummer", "personnummer 811228-9874"),
    ("personnummer_unlabelled", "kund 811228-9874 ringde"),
    ("hetu", "HETU 131052-308T"),
    ("be_national_number", "Rijksregisternummer 85.07.30-033.28"),
    ("cz_birth_number", "rodné číslo 736028/5163"),
    ("ie_pps", "PPS number 1234567T"),
    ("uk_nino", "National Insurance number AB 12 34 56 C"),
    ("uk_nino_compact", "NINO AB123456C"),
    ("cpf", "CPF 390.533.447-05"),
    ("sin", "SIN 046 454 286"),
    ("aadhaar", "Aadhaar 2345 6789 0124"),
    ("passport", "passport number X12345678 expires 2031"),
    ("cnp", "CNP 1800101221144"),
    ("card_visa_spaces", "Pay with 4111 1111 1111 1111"),
    ("card_visa_dashes", "Card 4111-1111-1111-1111 on file"),
    ("card_visa_dots", "Card 4111.1111.1111.1111 on file"),
    ("card_visa_bare", "card 4111111111111111 expired"),
    ("card_mastercard", "Mastercard 5555 5555 5555 4444"),
    ("card_mastercard_2", "MC 2223 0031 2200 3222"),
    ("card_amex", "Amex 3782 822463 10005"),
    ("card_discover", "Discover 6011 1111 1111 1117"),
    ("card_jcb", "JCB 3530 1113 3330 0000"),
    ("card_diners", "Diners 3056 9309 0259 04"),
    ("card_arabic_indic", "card " + "4111 1111 1111 1111".translate(ARABIC_INDIC)),
    ("card_devanagari", "card " + "4111 1111 1111 1111".translate(DEVANAGARI)),
    ("card_fullwidth", "card " + "4111 1111 1111 1111".translate(FULLWIDTH)),
    ("card_zero_width", "card 4111\u200b1111\u200b1111\u200b1111"),
    ("card_nbsp", "card 4111\u00a01111\u00a01111\u00a01111"),
    ("card_narrow_nbsp", "card 4111\u202f1111\u202f1111\u202f1111"),
)

EMAIL_PHONE_TEXTS: tuple[tuple[str, str], ...] = (
    ("email", "Mail alice@example.org for access"),
    ("email_plus", "Escalate to bob+oncall@corp.example.com"),
    ("email_spelled", "write to jane [at] example [dot] com"),
    ("email_fullwidth", "Mail ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｏｒｇ"),
    ("phone_us", "Call +1 650-253-0000 after six"),
    ("phone_uk", "Phone +44 20 7946 0958 on call"),
    ("phone_nl", "Bel +31 20 794 6000"),
    ("phone_de", "Tel. +49 30 901820"),
    ("phone_arabic_indic", "Call +1 " + "650-253-0000".translate(ARABIC_INDIC)),
    ("phone_fr", "Appeler +33 1 42 68 53 00"),
)


# --- Controls ---------------------------------------------------------------------------------

CONTROL_TEMPLATES: tuple[str, ...] = (
    "Commit {sha} fixed the flaky retry test",
    "Reverted {sha7} after the canary failed",
    "Request id {uuid} timed out at the gateway",
    "Run `docker pull ghcr.io/acme/api@sha256:{sha256}` to pin the image",
    "SRI hash for the CDN script: sha384-{b64_48}",
    "The artefact checksum is {md5} (md5) and {sha256} (sha256)",
    "Upgrade to Django {ver} and psycopg {ver2}; pin numpy<{ver3}",
    "Release v{ver} ships on {date} at 02:00 UTC",
    "Build {build} failed on runner ci-{n3}; rerun with --no-cache",
    "Order {order} was refunded on {date}",
    "Ticket ACME-{n5} tracks the migration; see {url}",
    "Dashboard: {url}?from=now-{n2}h&to=now&var-env=prod",
    "The API lives at {url} (port {port}, TLS 1.3)",
    "Postgres listens on 10.0.{n2}.{n3}:5432 inside the VPC",
    "Trace {trace} shows the slow span in checkout",
    "ULID {ulid} is the first event of the import",
    "Snowflake id {snow} belongs to the archived channel",
    "Set GITHUB_TOKEN and NPM_TOKEN as CI secrets; never commit them",
    "The password policy is 14 characters minimum, rotated every {n2} days",
    "API keys are stored in Vault at secret/data/prod/payments",
    "token TTL is {n4} seconds and refresh tokens last {n2} days",
    "api_key = os.environ['PAYMENTS_API_KEY'] in settings.py",
    "password: ${{DB_PASSWORD}} comes from the environment",
    "The SSN field was removed from the customer schema in v{ver}",
    "BSN validation moved to the onboarding service",
    "Serial {ssnlike} is printed on the router label",
    "ISBN 978-0-{n3}-{n5}-{d} is the style guide we follow",
    "Invoice total 1 234 567.89 EUR paid on {date}",
    "Load balancer handled {n6} requests per minute at peak",
    "Kafka offset {n9} on partition {n1} is the replay start",
    "Feature flag checkout_v{n1}_rollout is at {n2}%",
    "The base64 of 'hello world' is aGVsbG8gd29ybGQ= and its hex 68656c6c6f20776f726c64",
    "Encoded path %2Fvar%2Flog%2Fapp is what the proxy logs",
    "Call +1 650-253-0000 or mail ops@example.com for the pager",
    "Sprint {n2} retro: ship smaller PRs, under 400 changed lines",
    "The cron expression is '0 2 * * 1-5' for weekday builds",
    "Terraform state lock id {uuid}",
    "Prometheus alert HighErrorRate fires above {n1}.{n1}% for {n1}m",
    "Java heap is -Xmx{n1}g; GC pauses stay under {n3} ms",
    "Release notes: bumped lodash to {ver} (CVE-2021-23337)",
    "Migration 00{n2}_add_index_on_{word} runs online",
    "Использовать ветку release/{ver} для выката в {date}",
    "Το τεστ αποτυγχάνει μόνο στο CI, όχι τοπικά ({n2} φορές)",
    "اجتماع الفريق يوم ٢٠٢٤-٠٥-٠١ الساعة ١٠:٠٠",
    "发布版本 {ver} 已在 {date} 部署到生产环境",
    "Die Pipeline läuft nachts um 02:00 Uhr (Build {build})",
    "MAC 00:1a:2b:3c:4d:5e belongs to the lab printer",
    "IPv6 2001:db8::{n4} is the staging ingress",
    "Webhook target is https://hooks.example.com/notify/{word}",
    "Use `git rebase -i HEAD~{n1}` before merging",
)

WORDS = ("orders", "billing", "search", "users", "events", "payments", "ledger", "audit")


def _control_values(rng: random.Random) -> dict[str, str]:
    d = lambda n: _rand(rng, string.digits, n)  # noqa: E731
    sha = _rand(rng, LOWER_HEX, 40)
    return {
        "sha": sha,
        "sha7": sha[:7],
        "sha256": _rand(rng, LOWER_HEX, 64),
        "md5": _rand(rng, LOWER_HEX, 32),
        "uuid": "-".join(_rand(rng, LOWER_HEX, n) for n in (8, 4, 4, 4, 12)),
        "b64_48": base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode(),
        "ver": f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 30)}",
        "ver2": f"3.{rng.randint(0, 9)}.{rng.randint(0, 9)}",
        "ver3": f"{rng.randint(1, 3)}.{rng.randint(0, 9)}",
        "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "build": d(7),
        "order": d(9),
        "url": f"https://{rng.choice(WORDS)}.example.com/{rng.choice(WORDS)}/{d(4)}",
        "port": str(rng.choice((443, 8080, 8443, 5432, 6379, 9200))),
        "trace": _rand(rng, LOWER_HEX, 32),
        "ulid": "01" + _rand(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24),
        "snow": d(18),
        # Never issued: the Woolworth wallet number, and area 9xx with a group no ITIN uses.
        "ssnlike": "078-05-1120" if rng.random() < 0.5 else f"9{d(2)}-0{d(1)}-{d(4)}",
        "word": rng.choice(WORDS),
        "n1": str(rng.randint(1, 9)),
        "n2": str(rng.randint(10, 99)),
        "n3": str(rng.randint(100, 254)),
        "n4": str(rng.randint(1000, 9999)),
        "n5": d(5),
        "n6": d(6),
        "n9": d(9),
        "d": d(1),
    }


@cache
def items(seed: int = 38) -> tuple[Item, ...]:
    rng = random.Random(seed)
    out: list[Item] = []
    # Secrets: every token type in several frames, then disguised and encoded.
    for round_ in range(3):
        for kind, token in tokens(rng).items():
            frame = FRAMES[(round_ + len(out)) % len(FRAMES)]
            out.append(Item(f"s-{kind}-{round_}", SECRET, f"type:{kind}", frame.format(token)))
    base = tokens(rng)
    for how_name, how in DISGUISES.items():
        for kind in DISGUISED:
            text = FRAMES[len(out) % len(FRAMES)].format(disguise(base[kind], str(how)))
            out.append(Item(f"s-{kind}-{how_name}", SECRET, f"disguise:{how_name}", text))
    for enc_name, encode in ENCODINGS.items():
        for kind in DISGUISED[:8]:
            text = FRAMES[len(out) % len(FRAMES)].format(encode(base[kind]))
            out.append(Item(f"s-{kind}-{enc_name}", SECRET, f"encoding:{enc_name}", text))
    # Personal data: each text as written, and behind a zero-width space after its label.
    for kind, text in PERSONAL_TEXTS:
        out.append(Item(f"p-{kind}", PERSONAL, kind, text))
        out.append(Item(f"p-{kind}-quoted", PERSONAL, kind, f'The chat said: "{text}"'))
    for kind, text in EMAIL_PHONE_TEXTS:
        for i, frame in enumerate(("{}", "Escalation note — {}", "{} (from the CRM)")):
            out.append(Item(f"p-{kind}-{i}", PERSONAL, kind, frame.format(text), "email_phone"))
    # Controls: every template with several draws.
    for round_ in range(5):
        for i, template in enumerate(CONTROL_TEMPLATES):
            text = template.format(**_control_values(rng))
            out.append(Item(f"c-{i}-{round_}", CONTROL, f"template:{i}", text))
    return tuple(out)
