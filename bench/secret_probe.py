"""The stored-text probe of issue 38, through the full HTTP stack (Django's test client on a
fresh SQLite database, or the database ``--database-url`` names): every case of the labelled
corpus (``evaluation.secrets_corpus``) is written into one of the stored text fields, in turn,
and must be refused; every control must be stored.

    .venv/bin/python bench/secret_probe.py [--database-url postgres://…/steward_probe]

Fields, rotated over the cases: an entry body, an evidence quote, an evidence ref, a forget
reason, a proposal rationale, a proposal's claimed ``policy_version``, a proposal comment, a
source description, a Memory name, a Memory policy's glossary meaning, a webhook URL carrying
the text in its query, a saved view's name and its search (the inbox form, signed in); and
*split*: the text cut in two, the first half ending an entry body and the second opening its
evidence quote (one request). Personal-data cases that need a policy (email, phone) go to a
Memory that refuses them. A case whose text does not fit a field (a saved view name holds 80
characters, a glossary meaning 100 on one line) goes to the entry body instead.

*Stored* means the write answered 2xx (a saved view: anything below 400, the form redirects).
Afterwards every text and JSON column of every table is swept as ``bench/hostile_inputs.py``
does (``sweep``: each value scanned in its forms for secrets and default personal data).
Prints the figures as JSON; exits 1 when anything hostile was stored or a control refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from typing import Any
from urllib.parse import quote

from bench_env import setup_django, staff_with_memories

FIELDS = (
    "body",
    "evidence_quote",
    "evidence_ref",
    "forget_reason",
    "rationale",
    "policy_version",
    "comment",
    "source_description",
    "memory_name",
    "glossary",
    "webhook_url",
    "saved_view_name",
    "saved_view_query",
    "split",
)
#: Fields not about one Memory: the default policy (cards, national ids) applies there.
USER_FIELDS = ("source_description", "memory_name", "saved_view_name", "saved_view_query")
#: Longest text each field holds (longer texts go to the body).
LIMITS = {"saved_view_name": 80, "glossary": 100, "policy_version": 40, "memory_name": 200}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{tempfile.mkdtemp(prefix='steward-probe-')}/db.sqlite3"
    setup_django(database_url=url, broker=False)
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    # The probe writes ~2,000 requests with one key: lift the per-key rate (not under test).
    settings.STEWARD_THROTTLE_RATES = {**settings.STEWARD_THROTTLE_RATES, "key": "1000000/min"}
    call_command("migrate", verbosity=0)
    from evaluation.secrets_corpus import CONTROL, PERSONAL, SECRET, items
    from memory.keys import issue_api_key
    from memory.models import Memory

    _, group = staff_with_memories(
        "root", ("acme", "Acme"), ("strict", "Strict"), ("quiet", "Quiet")
    )
    Memory.objects.filter(slug="strict").update(
        policy={"personal_data": {"refuse": ["card", "government_id", "email", "phone"]}}
    )
    rita = User.objects.create_user("rita")
    rita.groups.add(group)
    keys = {
        "agent": issue_api_key(name="agent", role="agent")[1],
        "reviewer": issue_api_key(name="rita", role="reviewer", owner_username="rita")[1],
    }
    browser = Client()
    browser.force_login(rita)

    def call(method: str, who: str, path: str, body: Any = None, **headers: str) -> Any:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {keys[who]}")
        data = json.dumps(body) if body is not None else None
        return getattr(client, method)(
            f"/api/v1{path}", data, content_type="application/json", headers=headers
        )

    def entry(memory: str, body: str = "Scratch note", **extra: Any) -> Any:
        return call(
            "post", "agent", f"/memories/{memory}/entries", {"body": body, "kind": "fact", **extra}
        )

    counter = iter(range(10**9))

    def fresh_entry(memory: str) -> str:
        return entry(memory, f"Scratch note {next(counter)} for the probe").json()["entry_id"]

    def proposal(memory: str, **fields: Any) -> Any:
        body = {
            "memory": memory,
            "kind": "cleanup",
            "rationale": "Not needed any more",
            "entries": [{"entry_id": fresh_entry(memory), "version": 1}],
            **fields,
        }
        return call("post", "agent", "/proposals", body)

    pending = {m: proposal(m).json()["id"] for m in ("acme", "strict")}

    def write(field: str, memory: str, text: str) -> Any:
        n = next(counter)
        if field == "body":
            return entry(memory, text)
        if field == "evidence_quote":
            return entry(memory, evidence=[{"source": "repo", "ref": "chat/1", "quote": text}])
        if field == "evidence_ref":
            return entry(memory, evidence=[{"source": "repo", "ref": text}])
        if field == "forget_reason":
            uid = fresh_entry(memory)
            return call(
                "post", "agent", f"/memories/{memory}/entries/{uid}/forget", {"reason": text}
            )
        if field == "rationale":
            return proposal(memory, rationale=text)
        if field == "policy_version":
            return proposal(memory, policy_version=text)
        if field == "comment":
            return call("post", "agent", f"/proposals/{pending[memory]}/comments", {"body": text})
        if field == "source_description":
            return call("post", "agent", "/sources", {"name": f"src-{n}", "description": text})
        if field == "memory_name":
            return call("post", "reviewer", "/memories", {"slug": f"probe-{n}", "name": text})
        # Policy text goes to a Memory without proposals (a stored webhook is never called).
        target = "strict" if memory == "strict" else "quiet"
        if field == "glossary":
            change: dict[str, Any] = {"glossary": {f"w{n}": text}}
            return call("patch", "reviewer", f"/memories/{target}", {"policy": change})
        if field == "webhook_url":
            hook = f"https://hooks.example.com/notify?note={quote(text, safe='')}"
            change = {"webhook_url": hook}
            return call("patch", "reviewer", f"/memories/{target}", {"policy": change})
        if field in ("saved_view_name", "saved_view_query"):
            name, q = (text, "") if field == "saved_view_name" else (f"view {n}", text)
            return browser.post("/review/views/", {"name": name, "q": q})
        if field == "split":
            half = len(text) // 2
            return entry(
                memory,
                f"Deploy note: {text[:half]}",
                evidence=[{"source": "repo", "ref": "chat/2", "quote": f"{text[half:]} end"}],
            )
        raise ValueError(field)

    call("post", "agent", "/sources", {"name": "repo"})
    results: list[dict[str, Any]] = []
    for i, item in enumerate(items()):
        field = FIELDS[i % len(FIELDS)]
        text = item.text
        fits = len(text) <= LIMITS.get(field, 2000) and (
            field not in ("glossary", "saved_view_name", "policy_version") or "\n" not in text
        )
        if not fits or (field == "split" and item.group == CONTROL):
            field = "body" if item.group != CONTROL or field == "split" else "evidence_quote"
        if item.group == CONTROL and field in ("saved_view_name", "glossary") and not fits:
            field = "body"
        memory = "strict" if item.policy == "email_phone" else "acme"
        if memory == "strict" and field in USER_FIELDS:
            field = "body"  # sources, new Memories and saved views follow the default policy
        response = write(field, memory, text)
        # The inbox form redirects (302) once the view is saved, answers 4xx when refused.
        stored = 200 <= response.status_code < (400 if field.startswith("saved_view") else 300)
        results.append(
            {
                "id": item.id,
                "group": item.group,
                "kind": item.kind,
                "field": field,
                "status": response.status_code,
                "stored": stored,
            }
        )

    def count(group: str, stored: bool) -> int:
        return sum(1 for r in results if r["group"] == group and r["stored"] is stored)

    by_field = Counter(r["field"] for r in results if r["group"] != CONTROL)
    unexpected_status = Counter(
        (r["field"], r["status"])
        for r in results
        if r["group"] != CONTROL and not r["stored"] and r["status"] != 422
    )
    from hostile_inputs import sweep

    swept = sweep()
    report = {
        "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
        "secret_cases": sum(1 for r in results if r["group"] == SECRET),
        "personal_cases": sum(1 for r in results if r["group"] == PERSONAL),
        "control_cases": sum(1 for r in results if r["group"] == CONTROL),
        "secrets_stored": count(SECRET, True),
        "personal_stored": count(PERSONAL, True),
        "controls_refused": count(CONTROL, False),
        "stored_values_swept": swept["values"],
        "swept_values_with_a_secret": swept["secrets"],
        "swept_values_with_personal_data": swept["personal"],
        "hostile_cases_by_field": dict(sorted(by_field.items())),
        "refused_other_than_422": {
            f"{f} {s}": n for (f, s), n in sorted(unexpected_status.items())
        },
        "stored_samples": [r for r in results if r["group"] != CONTROL and r["stored"]][:40],
        "refused_control_samples": [
            r for r in results if r["group"] == CONTROL and not r["stored"]
        ][:10],
    }
    print(json.dumps(report, indent=2))
    bad = (
        report["secrets_stored"]
        or report["personal_stored"]
        or report["controls_refused"]
        or swept["secrets"]
        or swept["personal"]
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
