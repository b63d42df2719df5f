"""Hostile inputs against the data layer, through the full HTTP stack (Django's test client:
middleware, authentication, parsers, error envelope) on a fresh SQLite database, then a sweep of
every stored text column for secrets and refused personal data.

    .venv/bin/python bench/hostile_inputs.py

Each case names the request, the status it must get and the error code; a case *fails* when the
status or code differs or when the request left anything behind. Afterwards every text and JSON
column of every table (audit payloads, idempotency records, names, ids, bodies …) is read back
and scanned in its scan form (NFKC, invisible characters removed); "secrets stored" counts the
values where detect-secrets still finds one. Prints the figures; exits 1 on any failure.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from typing import Any

from bench_env import setup_django, staff_with_memories

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
SLACK = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
SECRETS = {
    "plain": AWS,
    "github": GITHUB,
    "slack": SLACK,
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in AWS),
    "zero_width_space": "AKIA\u200bIOSFODNN7EXAMPLE",
    "zero_width_joiner": "ghp_\u200dabcdefghijklmnopqrstuvwxyz0123456789",
    "word_joiner": "AKIA\u2060IOSFODNN7EXAMPLE",
    "soft_hyphen": "AKIAIOSF\u00adODNN7EXAMPLE",
    "bom": "AKIA\ufeffIOSFODNN7EXAMPLE",
    "bidi": "\u202eAKIAIOSFODNN7EXAMPLE",
    "variation_selector": "AKIA\ufe0fIOSFODNN7EXAMPLE",
    "tags": "AKIA\U000e0041IOSFODNN7EXAMPLE",
}
PERSONAL = {
    "visa": "4111 1111 1111 1111",
    "visa_dashes": "4111-1111-1111-1111",
    "visa_fullwidth": "４１１１ １１１１ １１１１ １１１１",
    "visa_zero_width": "4111\u200b1111\u200b1111\u200b1111",
    "mastercard": "5555 5555 5555 4444",
    "amex": "3782 822463 10005",
    "us_ssn": "536-90-4399",
    "br_cpf": "390.533.447-05",
    "es_dni": "12345678Z",
    "it_codice_fiscale": "RCCMNL83S18D969H",
    "in_aadhaar": "2345 6789 0124",
}
WEBHOOKS = [
    "http://hooks.example.com/x",
    "https://169.254.169.254/latest/meta-data/",
    "https://127.0.0.1/",
    "https://[::1]/",
    "https://[::ffff:169.254.169.254]/",
    "https://10.0.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",
    "https://0.0.0.0/",
    "https://localhost/",
    "https://metadata.google.internal/",
    "file:///etc/passwd",
]


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="steward-hostile-")
    setup_django(database_url=f"sqlite:///{tmp}/db.sqlite3", broker=False)
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    from memory.keys import issue_api_key

    _, group = staff_with_memories("root", ("acme", "Acme"), ("other", "Other"))
    User.objects.create_user("rita").groups.add(group)
    keys = {
        "agent": issue_api_key(name="agent", role="agent")[1],
        "public": issue_api_key(name="public", role="agent", clearance="public")[1],
        "confidential": issue_api_key(name="conf", role="agent", clearance="confidential")[1],
        "scoped": issue_api_key(name="scoped", role="agent", memory_slugs=("other",))[1],
        "scoped_reviewer": issue_api_key(
            name="scoped-rev", role="reviewer", memory_slugs=("other",), owner_username="rita"
        )[1],
        "reviewer": issue_api_key(name="rita", role="reviewer", owner_username="rita")[1],
    }

    def client(who: str) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {keys[who]}")

    def post(who: str, path: str, body: Any, **headers: str) -> Any:
        return client(who).post(
            f"/api/v1{path}", json.dumps(body), content_type="application/json", headers=headers
        )

    def patch(who: str, path: str, body: Any) -> Any:
        return client(who).patch(
            f"/api/v1{path}", json.dumps(body), content_type="application/json"
        )

    from memory.models import Entry, Revision, SourceDeclaration

    cases: list[tuple[str, Any, int, str]] = []

    def expect(name: str, response: Any, status: int, code: str) -> None:
        cases.append((name, response, status, code))

    E = "/memories/acme/entries"
    # A proposal the secret-bearing Idempotency-Key would file, were the key not refused.
    cleanup_target = json.loads(
        post("agent", E, {"body": "Scratch note for the idempotency check", "kind": "fact"}).content
    )["entry_id"]

    def refused(prefix: str, code: str, responses: dict[str, Any]) -> None:
        """Each response (named ``prefix/name``) must be a 422 with ``code``."""
        for name, response in responses.items():
            expect(f"{prefix}/{name}", response, 422, code)

    def fact(body: str, quote: str | None = None, ref: str = "r") -> dict[str, Any]:
        """An entry's fields, with one evidence item quoting ``quote`` when given."""
        evidence = {"evidence": [{"source": "repo", "ref": ref, "quote": quote}]} if quote else {}
        return {"body": body, "kind": "fact", **evidence}

    for label, secret in SECRETS.items():
        refused(
            f"secret/{label}",
            "secret_detected",
            {
                "body": post("agent", E, fact(f"deploy with {secret}")),
                "quote": post("agent", E, fact("deploy notes", quote=secret)),
                "memory_name": post(
                    "reviewer",
                    "/memories",
                    {"slug": f"m-{label.replace('_', '-')}", "name": f"Team {secret}"},
                ),
            },
        )
        # Ids are printable ASCII; a non-ASCII disguise is already refused as 400.
        printable = secret.isascii() and secret.isprintable()
        status, code = (422, "secret_detected") if printable else (400, "invalid")
        expect(
            f"secret/{label}/session_id",
            post(
                "agent",
                E,
                {
                    "body": "scratch",
                    "kind": "working_note",
                    "tier": "session",
                    "session_id": secret,
                },
            ),
            status,
            code,
        )
        if printable:
            refused(
                f"secret/{label}",
                "secret_detected",
                {
                    "source_name": post("agent", "/sources", {"name": secret}),
                    "session_end": post("agent", f"/memories/acme/sessions/{secret}/end", {}),
                    "idempotency_key": post(
                        "agent",
                        "/proposals",
                        {
                            "memory": "acme",
                            "kind": "cleanup",
                            "rationale": "x",
                            "entries": [{"entry_id": cleanup_target, "version": 1}],
                        },
                        **{"Idempotency-Key": secret},
                    ),
                },
            )
    for label, number in PERSONAL.items():
        refused(
            f"personal/{label}",
            "personal_data_detected",
            {
                "body": post("agent", E, fact(f"customer number {number} on file")),
                "reason_quote": post("agent", E, fact("customer called", quote=number, ref="t")),
            },
        )
    for url in WEBHOOKS:
        expect(
            f"webhook/{url}",
            patch("reviewer", "/memories/acme", {"policy": {"webhook_url": url}}),
            400,
            "invalid",
        )
    for s in ("internal", "confidential", "restricted"):
        expect(
            f"clearance/public_writes_{s}",
            post("public", E, {"body": f"a {s} fact", "kind": "fact", "sensitivity": s}),
            403,
            "forbidden",
        )
    hidden = json.loads(
        post(
            "confidential",
            E,
            {
                "body": "Merger with Initech",
                "kind": "fact",
                "sensitivity": "confidential",
                "tier": "session",
                "session_id": "s1",
            },
        ).content
    )["entry_id"]
    shown = json.loads(
        post(
            "confidential",
            E,
            {"body": "Office moves in May", "kind": "fact", "sensitivity": "public"},
        ).content
    )["entry_id"]
    for op, body in (
        ("revise", {"body": "Merger with Hooli"}),
        ("forget", {"reason": "x"}),
        ("reactivate", {}),
    ):
        expect(
            f"clearance/public_{op}_hidden",
            post("public", f"{E}/{hidden}/{op}", body),
            404,
            "not_found",
        )
    expect(
        "clearance/public_relation_hidden",
        post(
            "public",
            "/memories/acme/relations",
            {"kind": "conflicts_with", "from_entry": shown, "to_entry": hidden},
        ),
        404,
        "not_found",
    )
    expect(
        "clearance/public_proposal_hidden",
        post(
            "public",
            "/proposals",
            {
                "memory": "acme",
                "kind": "cleanup",
                "rationale": "x",
                "entries": [{"entry_id": hidden, "version": 1}],
            },
        ),
        404,
        "not_found",
    )
    ended = post("public", "/memories/acme/sessions/s1/end", {})
    cases.append(("clearance/public_session_end_spares_hidden", ended, 200, ""))
    many = [{"source": "repo", "ref": f"d{i}"} for i in range(settings.STEWARD_MAX_EVIDENCE)]
    full = json.loads(
        post("agent", E, {"body": "Runbook v1", "kind": "fact", "evidence": many}).content
    )["entry_id"]
    expect(
        "evidence/revise_union_over_limit",
        post(
            "agent",
            f"{E}/{full}/revise",
            {"body": "Runbook v2", "evidence": [{"source": "repo", "ref": "new"}]},
        ),
        413,
        "too_large",
    )
    for who in ("agent", "scoped", "scoped_reviewer"):
        for decl in (
            {"authority": "untrusted", "verification": "not_verified"},
            {"authority": "system_attested", "verification": "verified"},
        ):
            expect(
                f"declare/{who}/{decl['authority']}",
                post(who, "/sources/repo/declarations", decl),
                403,
                "forbidden",
            )

    failures = []
    for name, r, status, code in cases:
        got = json.loads(r.content) if r.content else {}
        got_code = (got.get("error") or {}).get("code", "")
        if r.status_code != status or (code and got_code != code):
            failures.append(f"{name}: {r.status_code} {got_code}")
        if name == "clearance/public_session_end_spares_hidden" and hidden in r.content.decode():
            failures.append(f"{name}: retired {hidden}")
    from memory.models import Head

    if Head.objects.get(entry__uid=hidden).state != "active":
        failures.append("clearance: the hidden session entry was retired")
    if Entry.objects.filter(uid=full).get().versions.count() != 1:
        failures.append("evidence: the over-limit revise wrote a version")
    if SourceDeclaration.objects.count() != 1:
        failures.append("declare: a refused declaration was stored")

    stored = sweep()
    print(
        json.dumps(
            {
                "hostile_requests": len(cases),
                "failures": len(failures),
                "failure_samples": failures[:10],
                "entries_stored": Entry.objects.count(),
                "revisions": Revision.objects.count(),
                "stored_values_scanned": stored["values"],
                "secrets_stored": stored["secrets"],
                "personal_data_stored": stored["personal"],
            },
            indent=2,
        )
    )
    return 1 if failures or stored["secrets"] or stored["personal"] else 0


#: The server's own entry ids (``memory.models.new_entry_id``).
SERVER_ID = re.compile(r"\be_[0-9a-f]{16}\b")
#: Columns holding the server's hex digests (content hashes, request hashes, the audit chain).
HASH_COLUMNS = frozenset({"content_hash", "request_hash", "digest", "chain", "body_hash"})


def sweep() -> dict[str, int]:
    """Every text/JSON value of every table, scanned like an admission would."""
    from django.apps import apps
    from django.db import models

    from memory.admission import find_secrets, scan_form
    from memory.personal_data import DEFAULT_REFUSED, find_personal_data

    out = {"values": 0, "secrets": 0, "personal": 0}
    for model in apps.get_models():
        fields = [
            f.attname
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
            # The server's own SHA-256 hex digests: a run of their digits can pass a Luhn check.
            and f.attname not in HASH_COLUMNS
        ]
        if not fields or model._meta.label in {
            "auth.User",
            "memory.ApiKey",
            "sessions.Session",
            "auth.Permission",
            "contenttypes.ContentType",
        }:
            continue  # password and key hashes, framework tables
        for row in model._default_manager.values_list(*fields).iterator():
            for value in row:
                if value in (None, "", [], {}):
                    continue
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                out["values"] += 1
                if find_secrets(text):
                    out["secrets"] += 1
                # The server's entry ids are random hex: 13 of their digits in a row can pass a
                # Luhn check on a card prefix (ids are never scanned for personal data).
                if find_personal_data(scan_form(SERVER_ID.sub("e_", text)), DEFAULT_REFUSED):
                    out["personal"] += 1
    return out


if __name__ == "__main__":
    sys.exit(main())
