"""The token formats the secret scan knows besides detect-secrets' plugins, and the text forms
it reads (``memory.admission.find_secrets`` is the entry point).

Rule sets, in the order they are consulted:

1. detect-secrets' pattern plugins (``memory.admission``): AWS, GitHub classic, GitLab, Slack,
   Stripe, Twilio, SendGrid, npm (in ``.npmrc``), PyPI, OpenAI, Discord, Telegram, JWT, private
   keys, credentials in URLs, …
2. Microsoft's Security Utilities rule set (the ``microsoft-security-utilities-secret-masker``
   package, the patterns Azure's tooling masks with): its *high-confidence* identifiable keys
   (Azure storage, Cosmos DB, Service Bus, Event Hub, IoT, Search, APIM, Redis, Container
   Registry, Functions, AAD client secrets, Databricks, NuGet, npm author keys) and, from its
   broader sets, credentials in URLs, bearer tokens in an ``Authorization`` header, SAS
   signatures and PKCS#12 bundles. Its *unclassified* 32-byte base64 / 16-byte hex rules are
   left out: memories are full of hashes.
3. :data:`PROVIDER_RULES` below: the documented, fixed-prefix formats of the other major
   providers that neither set knows (GitHub fine-grained PATs, Google API keys, Anthropic,
   HashiCorp Vault, DigitalOcean, Shopify, age, Hugging Face, …), plus two contextual rules: a
   credential-named query parameter in a URL and a credential-named assignment whose value
   looks generated (letters *and* digits, no spaces, not a variable reference).

Every rule reads several *forms* of a text (:func:`forms`): the text itself; its scan form
(NFKC, invisible characters removed); a *squeezed* form with every non-ASCII separator (no-break
and other Unicode spaces, line and paragraph separators, braille and Hangul blanks), every
combining mark and every invisible character removed, non-ASCII digits read as ASCII digits and
confusable letters folded to the ASCII letter they imitate (ICU's spoof checker, Unicode UTS #39
skeletons: Cyrillic ``А`` reads ``A``); and the *decoded* forms of long base64, base32-free hex
and percent-encoded runs (and HTML character references), decoded when the result is printable
text, two levels deep.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

# --- 3. Provider formats ---------------------------------------------------------------------

#: Left and right edges of a token: not inside a longer run of token characters.
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"

#: (name, pattern) of fixed-prefix provider formats, from each provider's documented token
#: format. Lengths are lower bounds (providers lengthen tokens), never exact.
PROVIDER_RULES: tuple[tuple[str, str], ...] = (
    ("GitHub Fine-Grained Token", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("GitHub Token", _L + r"gh[pousr]_[A-Za-z0-9_]{30,}"),
    (
        "GitLab Token",
        _L + r"gl(?:pat|dt|ptt|rt|cbt|soat|ffct|oas|imt|ft|agent)-[A-Za-z0-9_\-]{20,}",
    ),
    ("GitLab Runner Token", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    ("Google API Key", _L + r"AIza[0-9A-Za-z_\-]{35}"),
    ("Google OAuth Token", _L + r"ya29\.[0-9A-Za-z_\-]{30,}"),
    ("Google OAuth Client Secret", _L + r"GOCSPX-[0-9A-Za-z_\-]{20,}"),
    ("npm Token", _L + r"npm_[A-Za-z0-9]{36}" + _R),
    ("Anthropic API Key", _L + r"sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API Key", _L + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API Key", _L + r"sk-[A-Za-z0-9]{48}" + _R),
    ("HashiCorp Vault Token", _L + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("Terraform Cloud Token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{40,}"),
    ("DigitalOcean Token", _L + r"do[opr]_v1_[a-f0-9]{64}"),
    ("Shopify Token", _L + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("age Secret Key", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{50,}"),
    ("Stripe Key", _L + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}"),
    ("Stripe Webhook Secret", _L + r"whsec_[A-Za-z0-9+/=]{24,}"),
    ("Slack App Token", _L + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    ("Slack Token", _L + r"xox[abposre]-(?:\d+-)?[A-Za-z0-9\-]{10,}"),
    ("Slack Webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}"),
    ("Discord Webhook", r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}"),
    ("Microsoft Teams Webhook", r"webhook\.office\.com/webhookb2/[A-Za-z0-9@\-]{20,}"),
    ("Hugging Face Token", _L + r"(?:hf|api_org)_[A-Za-z0-9]{30,}"),
    ("Replicate Token", _L + r"r8_[A-Za-z0-9]{30,}"),
    ("Groq API Key", _L + r"gsk_[A-Za-z0-9]{40,}"),
    ("xAI API Key", _L + r"xai-[A-Za-z0-9]{60,}"),
    ("Perplexity API Key", _L + r"pplx-[A-Za-z0-9]{40,}"),
    ("LangSmith Key", _L + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{8,}"),
    ("Linear API Key", _L + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    ("Notion Token", _L + r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}" + _R + ")"),
    ("Databricks Token", _L + r"dapi[a-f0-9]{32}(?:-\d)?" + _R),
    ("Figma Token", _L + r"fig[dou]_[A-Za-z0-9_\-]{40,}"),
    ("Atlassian Token", _L + r"AT(?:ATT|CTT|OAT)3[A-Za-z0-9_\-=]{60,}"),
    ("Sentry Token", _L + r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}"),
    ("RubyGems Key", _L + r"rubygems_[a-f0-9]{48}"),
    ("Pulumi Token", _L + r"pul-[a-f0-9]{40}"),
    ("Docker Hub Token", _L + r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}"),
    ("Postman Key", _L + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Heroku Token", _L + r"HRKU-[A-Za-z0-9_\-]{20,}"),
    ("Fly.io Token", _L + r"(?:fo1_[A-Za-z0-9_\-]{40,}|FlyV1 fm\d[a-z]?_[A-Za-z0-9+/=_\-]{40,})"),
    (
        "Doppler Token",
        _L + r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,}",
    ),
    ("PyPI Token", _L + r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}"),
    ("Supabase Key", _L + r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})"),
    ("Netlify Token", _L + r"nfp_[A-Za-z0-9]{36,}"),
    ("PlanetScale Token", _L + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,}"),
    ("Mapbox Secret Token", _L + r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("Shippo Token", _L + r"shippo_(?:live|test)_[a-f0-9]{40}"),
    ("Airtable Token", _L + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("Buildkite Token", _L + r"bkua_[a-f0-9]{40}"),
    ("CircleCI Token", _L + r"CCIPAT_[A-Za-z0-9_]{30,}"),
    ("Contentful Token", _L + r"CFPAT-[A-Za-z0-9_\-]{40,}"),
    ("Dynatrace Token", _L + r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("EasyPost Key", _L + r"EZ[AT]K[A-Za-z0-9]{50,}"),
    ("New Relic Key", _L + r"NR(?:AK|JS|II|RA)-[A-Za-z0-9]{20,}"),
    ("Prefect Token", _L + r"pnu_[A-Za-z0-9]{36}"),
    ("ReadMe Key", _L + r"rdme_[a-z0-9]{60,}"),
    ("Brevo Key", _L + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("Typeform Token", _L + r"tfp_[A-Za-z0-9_\-.=]{50,}"),
    ("Yandex Key", _L + r"(?:AQVN[A-Za-z0-9_\-]{35,}|YC[A-Za-z0-9_\-]{38})" + _R),
    (
        "1Password Token",
        _L + r"(?:ops_eyJ[A-Za-z0-9+/=_\-]{60,}|A3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5})",
    ),
    ("Facebook Access Token", _L + r"EAA[A-Za-z0-9]{80,}"),
    ("Twitter Bearer Token", r"A{22}[A-Za-z0-9%]{40,}"),
    ("AWS Access Key", _L + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}" + _R),
    (
        "AWS Secret Access Key",
        r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"'\s]*[:=]+\s*[\"']?"
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
    ("Alibaba Cloud Key", _L + r"LTAI[A-Za-z0-9]{20}" + _R),
    ("Cloudflare Origin CA Key", _L + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{140,}"),
    ("Grafana Token", _L + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})"),
    ("Square Token", _L + r"(?:EAAA[A-Za-z0-9_\-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,})"),
    ("Mailgun Key", _L + r"key-[a-f0-9]{32}" + _R),
    ("Azure AD Client Secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    ("SSH Private Key", r"PuTTY-User-Key-File-\d|-----BEGIN[A-Z ]{0,30} PRIVATE KEY"),
)

#: A URL query parameter named for a credential, with a value of 16+ token characters.
_QUERY_SECRET = re.compile(
    r"[?&#;](?i:access_token|token|api_?key|apikey|secret|client_secret|password|passwd|pwd|"
    r"auth_?token|sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|"
    r"private_token|refresh_token|id_token)=([A-Za-z0-9%._~+/=\-]{16,})"
)

#: ``password = …``, ``api_key: …``, ``token is …``: a credential-named word assigned a value.
_ASSIGNED_SECRET = re.compile(
    r"(?<![A-Za-z])(?i:password|passwd|passphrase|pwd|secret|client[_\- ]?secret|api[_\- ]?key|"
    r"apikey|access[_\- ]?key|access[_\- ]?token|auth[_\- ]?token|bearer|private[_\- ]?key|"
    r"secret[_\- ]?key|token|credentials?)(?![A-Za-z])[\"']?"
    r"(?:\s*(?:[:=]|=>|:=)\s*|\s+(?i:is|was|=|:)\s+)[\"'`]?([^\s\"'`<>,;()\[\]{}]{8,})"
)

#: Values of an assignment that are references, not secrets.
_REFERENCE = re.compile(
    r"^(?:\$|%|&|@|\*|#|\.{2,}|~)|://|^(?i:env|vault|ssm|secretsmanager|keyvault|op|file|arn)[:.]|"
    r"(?i:environ|getenv|process\.env|settings\.|config\.|secrets\.|example|placeholder|redacted|"
    r"changeme|xxxx|\*\*\*)"
)


def _generated(value: str) -> bool:
    """A value that looks machine- or person-chosen as a secret: letters and digits both, not
    a version, date, time, size or identifier-like word run."""
    value = value.rstrip(".:!?")
    if len(value) < 8 or _REFERENCE.search(value):
        return False
    letters = sum(ch.isalpha() for ch in value)
    digits = sum(ch.isdigit() for ch in value)
    if not letters or not digits:
        return False
    if re.fullmatch(r"v?\d+(?:[.\-]\d+)*(?:[.\-+]?[A-Za-z]+\d*)*", value):
        return False  # 1.2.3, 2024-05-01, 3.11rc1, 30days
    return not re.fullmatch(
        r"\d+(?:ms|s|m|h|d|kb|mb|gb|tb|days|hours|minutes|seconds)", value, re.I
    )


# --- 2. Microsoft Security Utilities ---------------------------------------------------------

_MS_FILES = {
    "HighConfidenceSecurityModels.json": None,  # every rule
    "MediumConfidenceSecurityModels.json": {
        "UrlCredentials",
        "LooseSasSecret",
        "Pkcs12CertificatePrivateKeyBundle",
    },
    "LowConfidenceSecurityModels.json": {"OAuth2BearerToken"},
}


@lru_cache(maxsize=1)
def _microsoft_rules() -> tuple[tuple[str, re.Pattern[str], str | None], ...]:
    """(name, compiled pattern, sniff literal or None) of the chosen Microsoft rules."""
    try:
        import microsoft_security_utilities_secret_masker as ms
    except ImportError:  # pragma: no cover - a declared dependency
        return ()
    folder = Path(ms.__file__).resolve().parent / "GeneratedRegexPatterns"
    rules: list[tuple[str, re.Pattern[str], str | None]] = []
    for file_name, wanted in _MS_FILES.items():
        for rule in json.loads((folder / file_name).read_text(encoding="utf-8")):
            if wanted is not None and rule["Name"] not in wanted:
                continue
            sniff = rule.get("SniffLiterals") or []
            rules.append(
                (
                    _MS_NAMES.get(rule["Name"], rule["Name"]),
                    re.compile(rule["Pattern"], re.ASCII),
                    # A rule with several literals is tried whenever any of them occurs.
                    sniff[0] if len(sniff) == 1 else None,
                )
            )
    return tuple(rules)


_MS_NAMES = {"UrlCredentials": "Basic Auth Credentials", "OAuth2BearerToken": "Bearer Token"}


@lru_cache(maxsize=1)
def _provider_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, re.compile(pattern)) for name, pattern in PROVIDER_RULES)


def find_by_rules(text: str) -> list[str]:
    """Names of the Microsoft and provider rules that match ``text`` (one form)."""
    found: list[str] = []
    if _LONG_RUN.search(text):
        _find_tokens(text, found)
    if "Assigned Credential" not in found and any(
        _generated(m.group(1)) for m in _ASSIGNED_SECRET.finditer(text)
    ):
        found.append("Assigned Credential")
    return found


#: Every token rule needs a run of at least 16 characters without a space or a bracket: a
#: text without one (most prose) skips them.
_LONG_RUN = re.compile(r"[^\s\"'<>()\[\]{},;|`]{16,}")


def _find_tokens(text: str, found: list[str]) -> None:
    for name, pattern in _provider_patterns():
        if name not in found and pattern.search(text):
            found.append(name)
    for name, pattern, sniff in _microsoft_rules():
        if name in found or (sniff is not None and sniff not in text):
            continue
        if pattern.search(text):
            found.append(name)
    if "Credential In URL Query" not in found and any(
        _generated(unquote(m.group(1))) or len(m.group(1)) >= 24
        for m in _QUERY_SECRET.finditer(text)
    ):
        found.append("Credential In URL Query")


# --- Forms ----------------------------------------------------------------------------------

# Default-ignorable code points that are not format (Cf) characters (Unicode
# DerivedCoreProperties): they render as nothing and would split a token for a detector.
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement
)

#: Characters that look blank but are not Unicode spaces.
_BLANKS = frozenset({0x2800, 0x3164, 0xFFA0, 0x115F, 0x1160, 0x2062, 0x2063, 0x2064})


def invisible(ch: str) -> bool:
    """A character that renders as nothing: a format character or a default ignorable."""
    if unicodedata.category(ch) == "Cf":
        return True
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _IGNORABLE_RANGES)


def _dropped_when_squeezed(ch: str) -> bool:
    """Non-ASCII separators, blanks, marks and invisibles: removed in the squeezed form."""
    if ch.isascii():
        return False
    cat = unicodedata.category(ch)
    return cat[0] in "ZM" or cat == "Cc" or ord(ch) in _BLANKS or invisible(ch)


@lru_cache(maxsize=1)
def _spoof_checker():  # type: ignore[no-untyped-def]
    try:
        import icu
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    return icu.SpoofChecker()


@lru_cache(maxsize=1)
def _ascii_by_skeleton() -> dict[str, str]:
    """UTS #39 skeleton → the ASCII letters and digits that have it (``l`` → ``Il1``)."""
    checker = _spoof_checker()
    out: dict[str, str] = {}
    if checker is None:
        return out
    for cp in range(0x21, 0x7F):
        ch = chr(cp)
        if ch.isalnum():
            skeleton = checker.getSkeleton(0, ch)
            out[skeleton] = out.get(skeleton, "") + ch
    return out


@lru_cache(maxsize=4096)
def fold_confusable(ch: str) -> str:
    """The ASCII letter or digit that a non-ASCII character imitates (itself when none): a
    non-ASCII decimal digit reads as its value, then ICU's confusable skeleton decides; among
    several ASCII look-alikes (``l``, ``I``, ``1``) the one of the character's own case."""
    if ch.isascii():
        return ch
    if unicodedata.category(ch) == "Nd":
        return str(unicodedata.decimal(ch))
    checker = _spoof_checker()
    if checker is None:
        return ch
    candidates = _ascii_by_skeleton().get(checker.getSkeleton(0, ch), "")
    if not candidates:
        return ch
    if ch.isupper():
        preferred = [c for c in candidates if c.isupper()]
    elif ch.islower():
        preferred = [c for c in candidates if c.islower()]
    else:
        preferred = [c for c in candidates if c.isdigit()]
    return (preferred or list(candidates))[0]


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script (Arabic-Indic ``٤``, Devanagari ``४``,
    fullwidth ``４``) read as its ASCII digit."""
    if text.isascii():
        return text
    return "".join(
        str(unicodedata.decimal(ch))
        if not ch.isascii() and unicodedata.category(ch) == "Nd"
        else ch
        for ch in text
    )


def squeezed(text: str) -> str:
    """Non-ASCII separators, combining marks and invisibles removed (after decomposing, so
    ``É`` reads ``E``), digits of any script as ASCII, look-alike letters folded, then NFKC."""
    if text.isascii():
        return text
    # Separators first: NFKD would turn a no-break space into an ASCII one.
    kept = "".join(ch for ch in text if not _dropped_when_squeezed(ch))
    decomposed = unicodedata.normalize("NFKD", kept)
    kept = "".join(fold_confusable(ch) for ch in decomposed if not _dropped_when_squeezed(ch))
    return unicodedata.normalize("NFKC", kept)


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?:\\x|0x|%)?(?:[0-9A-Fa-f]{2}(?:\\x|[ :]|%)?){12,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY = re.compile(r"&#?[A-Za-z0-9]+;")


def _printable(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 and nearly all printable (a decoded secret), else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    return text if printable >= 0.95 * len(text) else None


def decoded(text: str) -> Iterator[str]:
    """The printable decodings of the long base64, hex and percent-encoded runs in ``text``
    and of its HTML character references."""
    if _PERCENT.search(text):
        plain = unquote(text)
        if plain != text:
            yield plain
    if _ENTITY.search(text):
        plain = html.unescape(text)
        if plain != text:
            yield plain
    for m in _HEX_RUN.finditer(text):
        digits = re.sub(r"\\x|0x|[ :%]", "", m.group())
        if len(digits) % 2 == 0 and not re.fullmatch(r"[0-9]+", digits):
            value = _printable(bytes.fromhex(digits))
            if value is not None:
                yield value
    for m in _BASE64_RUN.finditer(text):
        run = m.group().rstrip("=")
        if len(run) % 4 == 1:
            run = run[:-1]
        padded = run + "=" * (-len(run) % 4)
        for altchars in (b"+/", b"-_"):
            try:
                raw = base64.b64decode(padded, altchars=altchars, validate=True)
            except (binascii.Error, ValueError):
                continue
            value = _printable(raw)
            if value is not None:
                yield value
                break


def forms(text: str, scan_form: str, depth: int = 2) -> list[str]:
    """Every form of ``text`` the detectors read (``scan_form``: its NFKC, invisible-free form),
    without repeats."""
    out = [text]
    for form in (scan_form, squeezed(text)):
        if form not in out:
            out.append(form)
    if depth:
        for form in list(out):
            for plain in decoded(form):
                for more in forms(plain, unicodedata.normalize("NFKC", plain), depth - 1):
                    if more not in out:
                        out.append(more)
    return out
