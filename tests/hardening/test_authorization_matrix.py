"""The authorization matrix: every endpoint and page × every kind of caller, one expected status
per cell, all in ``EXPECTED`` below.

Endpoints come from the OpenAPI document served at ``/api/v1/schema/`` and pages from the URL
conf (``get_resolver()``), so a new endpoint or page without a row fails the test, and so does
a row for something that no longer exists. Requests go over real HTTP with API keys; staff and
the browser roles use Django sessions. Path parameters name real objects (the ``world`` of
tests/audit/test_auditor_refused.py) and bodies are built from the schema, so a request reaches
the permission check instead of failing validation.

A cell is an exact status (401, 403, 404, 302) or ``ok``: authorized — any status but 401, 403,
404 or a 5xx (a 400/409/422 there means the request got past authorization to the domain rules).
An ``ok`` where a refusal is expected is an *unexpected allow*; the test prints the counts.
Callers run deny-first (anonymous … auditor, then agent, reviewer, staff), so one caller's write
cannot change what a later refusal looks like.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django.test import Client

from tests.audit.conftest import logged_in
from tests.audit.test_auditor_refused import (
    fill,
    normalized,
    page_routes,
    schema_bodies,
    world,  # noqa: F401  (fixture)
)
from tests.audit.test_auditor_refused import (
    routes as all_routes,
)
from tests.conftest import make_key

CALLERS = (
    "anonymous",
    "other_memory_agent",
    "low_clearance_agent",
    "auditor",
    "agent",
    "reviewer",
    "staff",
)

# One row per operation: (anonymous, other-Memory agent, public-clearance agent, auditor, agent,
# reviewer, staff). The world's entries are `internal`, so a public-clearance key cannot see them.
R = "ok"
EXPECTED: dict[str, tuple[Any, ...]] = {
    # Memories and sources: creating a Memory needs an unscoped reviewer or staff; declaring a
    # shared source's authority is a reviewer's decision.
    "POST /api/v1/memories": (401, 403, 403, 403, 403, R, R),
    "GET /api/v1/memories/{}": (401, 404, R, R, R, R, R),
    "PATCH /api/v1/memories/{}": (401, 404, 403, 403, 403, R, R),
    "POST /api/v1/sources": (401, R, R, 403, R, R, R),
    "GET /api/v1/sources/{}": (401, R, R, R, R, R, R),
    "POST /api/v1/sources/{}/declarations": (401, 403, 403, 403, 403, R, R),
    # Entries: agents write (reviewers do not), auditors only read; other Memories and higher clearances are 404.
    "GET /api/v1/memories/{}/entries": (401, 404, R, R, R, R, R),
    "POST /api/v1/memories/{}/entries": (401, 404, 403, 403, R, 403, R),
    "POST /api/v1/memories/{}/entries/batch": (401, 404, 403, 403, R, 403, R),
    "GET /api/v1/memories/{}/entries/{}": (401, 404, 404, R, R, R, R),
    "POST /api/v1/memories/{}/entries/{}/revise": (401, 404, 404, 403, R, 403, R),
    "POST /api/v1/memories/{}/entries/{}/forget": (401, 404, 404, 403, R, 403, R),
    "POST /api/v1/memories/{}/entries/{}/reactivate": (401, 404, 404, 403, R, 403, R),
    "POST /api/v1/memories/{}/entries/{}/pin": (401, 404, 403, 403, 403, R, R),
    # Quarantine and release are reviewers' decisions, like pinning.
    "POST /api/v1/memories/{}/entries/{}/quarantine": (401, 404, 403, 403, 403, R, R),
    "POST /api/v1/memories/{}/entries/{}/release": (401, 404, 403, 403, 403, R, R),
    # A re-check: agents and reviewers confirm; requiring one is a reviewer's decision.
    "POST /api/v1/memories/{}/entries/{}/confirm": (401, 404, 404, 403, R, R, R),
    "POST /api/v1/memories/{}/entries/{}/require-reverification": (
        401,
        404,
        403,
        403,
        403,
        R,
        R,
    ),
    "GET /api/v1/memories/{}/revalidation/due": (401, 404, R, R, R, R, R),
    "GET /api/v1/memories/{}/entries/{}/versions": (401, 404, 404, R, R, R, R),
    "GET /api/v1/memories/{}/entries/{}/versions/{}": (401, 404, 404, R, R, R, R),
    "POST /api/v1/memories/{}/sessions/{}/end": (401, 404, R, 403, R, 403, R),
    "POST /api/v1/memories/{}/relations": (401, 404, 404, 403, R, 403, R),
    "GET /api/v1/memories/{}/revisions": (401, 404, R, R, R, R, R),
    "GET /api/v1/memories/{}/revisions/{}": (401, 404, R, R, R, R, R),
    # Recall only reads: every reading role may.
    "POST /api/v1/memories/{}/search": (401, 404, R, R, R, R, R),
    "POST /api/v1/memories/{}/context-pack": (401, 404, R, R, R, R, R),
    # The exposure ledger names keys and runs: reviewers and auditors read it, agents do not.
    "GET /api/v1/memories/{}/exposures": (401, 404, 403, R, 403, R, R),
    # Maintenance: reviewers run it; readers read runs and the inventory.
    "POST /api/v1/memories/{}/maintenance/{}": (401, 404, 403, 403, 403, R, R),
    "GET /api/v1/memories/{}/maintenance/runs": (401, 404, R, R, R, R, R),
    "GET /api/v1/maintenance/runs/{}": (401, 404, R, R, R, R, R),
    "GET /api/v1/memories/{}/inventory": (401, 404, R, R, R, R, R),
    # Proposals: agents post and withdraw their own (only the submitter withdraws); reviewers
    # decide, and a key that may not decide is refused before the proposal is looked up.
    "GET /api/v1/proposals": (401, R, R, R, R, R, R),
    "POST /api/v1/proposals": (401, 404, 404, 403, R, 403, R),
    "GET /api/v1/proposals/{}": (401, 404, 404, R, R, R, R),
    "POST /api/v1/proposals/{}/withdraw": (401, 404, 404, 403, R, 403, 403),
    "POST /api/v1/proposals/{}/approve": (401, 403, 403, 403, 403, R, R),
    "POST /api/v1/proposals/{}/reject": (401, 403, 403, 403, 403, R, R),
    "POST /api/v1/proposals/{}/request-changes": (401, 403, 403, 403, 403, R, R),
    "POST /api/v1/proposals/bulk": (401, 403, 403, 403, 403, R, R),
    "POST /api/v1/proposals/{}/comments": (401, 404, 404, 403, R, R, R),
    # A comment is resolved by its author (the world's comment is the submitting agent's) or a
    # reviewer.
    "POST /api/v1/proposals/{}/comments/{}/resolve": (401, 404, 404, 403, R, R, R),
    "POST /api/v1/proposals/{}/amend": (401, 404, 404, 403, R, R, R),
    "POST /api/v1/proposals/{}/rebase": (401, 404, 404, 403, R, R, R),
    "POST /api/v1/proposals/{}/assign": (401, 404, 404, 403, 403, R, R),
    "GET /api/v1/operations/{}": (401, 404, 404, R, R, R, R),
    "POST /api/v1/operations/{}/compensate": (401, 404, 404, 403, 403, R, R),
    # Audit: reviewers, auditors and staff.
    "GET /api/v1/audit/events": (401, 403, 403, R, 403, R, R),
    "GET /api/v1/audit/export": (401, 403, 403, R, 403, R, R),
}

# Pages (GET) × (anonymous, agent key, reviewer, auditor, staff, signed-in user without a role).
PAGE_CALLERS = ("anonymous", "agent_key", "reviewer", "auditor", "staff", "no_role")
# Pages are for reviewers, auditors and staff; a key is no browser login; a signed-in user
# without a role is refused.
L = 302  # to the login page
READ = (L, L, 200, 200, 200, 403)
POST_ONLY = (405, 405, 405, 405, 405, 405)
PAGES: dict[str, tuple[Any, ...]] = {
    # Health checks for load balancers: anybody, and they show nothing (lib/health.py).
    "healthz": (200, 200, 200, 200, 200, 200),
    "readyz": (200, 200, 200, 200, 200, 200),
    "audit/": READ,
    "memories/<slug:slug>/": READ,
    "memories/<slug:slug>/entries/<str:entry_id>/": READ,
    "memories/<slug:slug>/maintenance/": READ,
    "memories/<slug:slug>/maintenance/<int:pk>/": READ,
    "memories/<slug:slug>/maintenance/tasks/<slug:job>/<str:task_id>/": READ,
    "memories/<slug:slug>/replay/": READ,
    "memories/<slug:slug>/revalidation/": READ,
    "memories/<slug:slug>/revisions/<int:number>/": READ,
    "memories/<slug:slug>/search/": READ,
    "operations/<int:pk>/": READ,
    "review/": READ,
    "review/new/": READ,
    "review/proposals/<int:pk>/": READ,
    "memories/<slug:slug>/entries/": READ,
    "notifications/": READ,
    "notifications/badge/": READ,
    # DEBUG only: 404 for everyone when DEBUG is off (as in the tests).
    "outbox/": (404, 404, 404, 404, 404, 404),
    "outbox/digests/": POST_ONLY,
    "notifications/seen/": POST_ONLY,
    "notifications/preferences/": POST_ONLY,
    # Form targets: POST only (who may POST is tested in tests/audit and tests/review_ui).
    "operations/<int:pk>/compensate/": POST_ONLY,
    "memories/<slug:slug>/replay/enable/": POST_ONLY,
    "review/memories/<slug:slug>/jobs/<slug:job>/schedule/": POST_ONLY,
    "review/claim/": POST_ONLY,
    "review/claim/release/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/quarantine/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/release/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/pin/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/forget/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/reactivate/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/confirm/": POST_ONLY,
    "review/entries/<slug:slug>/<str:entry_id>/require-reverification/": POST_ONLY,
    "review/proposals/<int:pk>/approve/": POST_ONLY,
    "review/proposals/<int:pk>/reject/": POST_ONLY,
    "review/proposals/<int:pk>/request-changes/": POST_ONLY,
    "review/proposals/<int:pk>/comment/": POST_ONLY,
    "review/proposals/<int:pk>/comments/<int:comment_id>/resolve/": POST_ONLY,
    "review/proposals/<int:pk>/amend/": POST_ONLY,
    "review/proposals/<int:pk>/rebase/": POST_ONLY,
    "review/proposals/<int:pk>/assign/": POST_ONLY,
    "review/bulk/": POST_ONLY,
    # A saved inbox view (the reviewer's own) opens only for its owner: anyone else gets 404.
    "review/views/<int:pk>/": (L, L, 302, 404, 404, 403),
    "review/views/": POST_ONLY,
    "review/views/<int:pk>/delete/": POST_ONLY,
}


def _callers(api: Any, keys: dict[str, Any]) -> dict[str, Any]:
    return {
        "anonymous": api.as_(None),
        "other_memory_agent": api.as_(keys["other"]),
        "low_clearance_agent": api.as_(keys["low"]),
        "auditor": api.as_(keys["auditor"]),
        "agent": api.as_(keys["agent"]),
        "reviewer": api.as_(keys["reviewer"]),
        "staff": logged_in("root"),
    }


def _send(client: Any, method: str, url: str, body: Any, n: int) -> int:
    headers = {"Idempotency-Key": f"matrix-{n}"}
    if isinstance(client, Client):
        data = json.dumps(body) if body is not None else ""
        return client.generic(
            method, url, data=data, content_type="application/json", headers=headers
        ).status_code
    return client.request(method, url, json=body, headers=headers).status_code


def _verdict(expected: Any, status: int) -> bool:
    if expected == R:
        return status not in (401, 403, 404) and status < 500
    return status == expected


def test_every_endpoint_has_a_row_and_every_cell_holds(
    api,
    world,  # noqa: F811
    memory,
    other_memory,
    agent,
    reviewer,
    auditor,
    staff,
    capsys,
):
    keys = {
        "agent": agent,
        "reviewer": reviewer,
        "auditor": auditor,
        "other": make_key("agent-other-only", "agent", memories=("other",)),
        "low": make_key("agent-public", "agent", clearance="public"),
    }
    schema = api.as_(reviewer).get("/api/v1/schema/?format=json").json()
    bodies = schema_bodies(schema, world)
    operations = {
        f"{m.upper()} {normalized(p)}": (m, p) for p, ops in schema["paths"].items() for m in ops
    }
    assert set(operations) == set(EXPECTED), (
        "Operations without a row: "
        f"{sorted(set(operations) - set(EXPECTED))}; rows without an operation: "
        f"{sorted(set(EXPECTED) - set(operations))}"
    )
    callers = _callers(api, keys)
    wrong: list[str] = []
    cells = Counter[str]()
    n = 0
    for name, (method, path) in sorted(operations.items()):
        url = fill(path, world, style="schema")
        body = bodies.get((normalized(path), method))
        if name == "POST /api/v1/proposals":  # a complete cleanup, so scope is what refuses
            body = {
                "memory": world["slug"],
                "kind": "cleanup",
                "rationale": "matrix probe",
                "entries": [{"entry_id": world["entry_id"], "version": 1}],
            }
        if name == "POST /api/v1/memories/{}/entries/batch":  # one well-formed item
            body = {"entries": [{"body": "matrix probe batch item", "kind": "fact"}]}
        for caller, expected in zip(CALLERS, _row(name), strict=True):
            n += 1
            status = _send(callers[caller], method.upper(), url, body, n)
            cells["cells"] += 1
            if not _verdict(expected, status):
                refused_expected = expected != R
                allowed = status not in (401, 403, 404) and status < 500
                if refused_expected and allowed:
                    cells["unexpected_allows"] += 1
                wrong.append(f"{name} as {caller}: expected {expected}, got {status}")
    with capsys.disabled():
        print(
            f"\nauthorization matrix (API): {cells['cells']} cells over {len(operations)} "
            f"operations × {len(CALLERS)} callers; mismatches: {len(wrong)}; "
            f"unexpected allows: {cells['unexpected_allows']}"
        )
    assert not wrong, "\n".join(wrong)


def _row(name: str) -> tuple[Any, ...]:
    # EXPECTED is written in the order (anonymous, other, low, auditor, agent, reviewer, staff)
    # to match CALLERS.
    return EXPECTED[name]


def test_every_page_has_a_row_and_every_cell_holds(
    api,
    world,  # noqa: F811
    agent,
    reviewer,
    auditor,
    staff,
    capsys,
):
    from django.contrib.auth.models import User

    User.objects.create_user("norole", password="pw-norole-123")
    callers = {
        "anonymous": Client(),
        "agent_key": Client(headers={"Authorization": f"Bearer {agent.secret}"}),
        "reviewer": logged_in("rita"),
        "auditor": logged_in("ada"),
        "staff": logged_in("root"),
        "no_role": logged_in("norole"),
    }
    from review.models import SavedView

    rita_view = SavedView.objects.create(user=User.objects.get(username="rita"), name="mine")
    segments = {
        **world["segments"],
        "maintenance": world["segments"].get("runs", 1),
        "views": rita_view.pk,
    }
    objects = {**world, "segments": segments}
    # Saved views are left out of the auditor walk (auditors keep views too), not out of here.
    own = [(r, cb) for r, cb in all_routes() if r.startswith("review/views/")]
    routes = {r: "/" + fill(r, objects) for r, _cb in [*page_routes(), *own]}
    actual = {
        r: tuple(callers[c].get(url).status_code for c in PAGE_CALLERS) for r, url in routes.items()
    }
    with capsys.disabled():
        print(
            f"\nauthorization matrix (pages): {len(routes) * len(PAGE_CALLERS)} cells over "
            f"{len(routes)} pages × {len(PAGE_CALLERS)} callers; "
            f"mismatches: {sum(row != PAGES.get(r) for r, row in actual.items())}"
        )
    assert set(routes) == set(PAGES), sorted(set(routes) ^ set(PAGES))
    wrong = [f"{r}: expected {PAGES[r]}, got {row}" for r, row in actual.items() if row != PAGES[r]]
    assert not wrong, "\n".join(wrong)
