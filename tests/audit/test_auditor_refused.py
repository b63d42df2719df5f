"""Auditors read everything and change nothing: every write endpoint and every form refuses them.

The endpoints are not listed by hand. The test walks the URL configuration
(``django.urls.get_resolver()``) and the OpenAPI document served at ``/api/v1/schema/``, so an
endpoint added later is covered the day it is added:

- every API route × POST/PUT/PATCH/DELETE with an auditor key (over real HTTP) and with an auditor
  browser session: 403 where the view has the method, 405 where it does not;
- every write operation the schema documents, with a request body built from the schema, so the
  request gets past parsing to the permission check;
- every browser page × the write methods with an auditor session, and every ``<form
  method="post">`` / ``hx-post``… found on the pages as staff, reviewer and auditor see them.

Path parameters are filled with real objects (a Memory, active/inactive/session entries, a
source, a pending proposal, an operation) so a request reaches the permission check: a 404 for a
missing object proves nothing and fails the test with a hint to add a builder below. Finally the
whole database must be byte-for-byte what it was before the auditor started.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.sessions.models import Session
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.audit.conftest import logged_in
from tests.factories import add_via_api

WRITE_METHODS = ("post", "put", "patch", "delete")

#: Routes that take POST but only read; auditors may use them, and they must write nothing.
READS_BY_POST = {
    "api/v1/memories/<slug:slug>/search": "recall never writes (DESIGN §6)",
    "api/v1/memories/<slug:slug>/context-pack": "a Context Pack is recall, rendered",
}

#: Route prefixes outside the product's state, and why they are not walked here.
OUTSIDE = {
    "": "the dashboard reads only (GET and HEAD; other methods 405)",
    "accounts/": "Django's login, logout and password views: a user's own session and password",
    "admin/": "Django admin refuses non-staff users with a redirect to its login (tested below)",
    "api/<path:rest>": "answers 404 for every path that is not an API endpoint",
    "mcp": "MCP takes API keys only (a browser session gets 401); tests/agents and the matrix",
    "review/views/": "a user's own saved inbox views, which auditors keep too (DESIGN §9 review); "
    "they change no Memory state: tests/review_ui/test_saved_views.py",
}

_PARAM = re.compile(r"<(?:(?P<conv>[^>:]+):)?(?P<name>[^>]+)>")
_SCHEMA_PARAM = re.compile(r"\{([^}]+)\}")


# --- The world the requests point at ----------------------------------------------------------


@pytest.fixture
def world(api, memory, agent, reviewer, auditor) -> dict[str, Any]:
    """Real objects for every path parameter, made through the public API."""
    a = api.as_(agent)
    active = add_via_api(a, "Auditors may read this entry")
    spare = add_via_api(a, "A second entry for the approved cleanup")
    inactive = add_via_api(a, "An entry that was retired")
    r = a.post(f"/api/v1/memories/acme/entries/{inactive['entry_id']}/forget", {"reason": "old"})
    assert r.status_code == 200, r.text
    add_via_api(a, "A session scratch note", kind="working_note", tier="session", session_id="s-1")
    world: dict[str, Any] = {
        "slug": "acme",
        "entry_id": active["entry_id"],
        "inactive_entry_id": inactive["entry_id"],
        "session_id": "s-1",
        "name": "repo",
        "number": 1,
        "job": "l1",
        # A queued maintenance run's page names its task (one no worker has taken: queued).
        "task_id": "0b9f6a52-3c1e-4c4e-9a57-0e4b8c1d2f30",
        "segments": {},
    }
    pending = _submit_cleanup(a, active, "audit-probe-pending")
    if pending is not None:
        world["segments"]["proposals"] = pending
        # A comment of the pending proposal, by its submitter (…/comments/{id}/resolve).
        r = a.post(f"/api/v1/proposals/{pending}/comments", {"body": "A point to resolve"})
        assert r.status_code == 201, r.text
        world["segments"]["comments"] = r.json()["id"]
        approved = _submit_cleanup(a, spare, "audit-probe-approved")
        r = api.as_(reviewer).post(f"/api/v1/proposals/{approved}/approve", {"comment": "ok"})
        assert r.status_code == 200, r.text
        world["segments"]["operations"] = r.json()["operation"]
    # A maintenance run, once the maintenance API exists (API.md: 202 {run}).
    r = api.as_(reviewer).post("/api/v1/memories/acme/maintenance/l1", {"dry_run": True})
    if r.status_code == 202:
        run = r.json()["run"]
        world["segments"]["runs"] = run["id"] if isinstance(run, dict) else run
        world["segments"]["maintenance"] = world["segments"]["runs"]  # the run's page
    return world


def _submit_cleanup(client: Any, entry: dict[str, Any], key: str) -> int | None:
    """A pending cleanup proposal through the documented API, or None while there is none."""
    r = client.post(
        "/api/v1/proposals",
        {
            "memory": "acme",
            "kind": "cleanup",
            "rationale": "audit probe",
            "entries": [{"entry_id": entry["entry_id"], "version": 1}],
        },
        headers={"Idempotency-Key": key},
    )
    if r.status_code == 404 and r.json()["error"]["code"] == "not_found" and "endpoint" in r.text:
        return None
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


def fill(route: str, world: dict[str, Any], style: str = "route") -> str:
    """Replace each path parameter with a real object's id (by name, or for integer ids by the
    collection segment before it: ``proposals/<int:pk>`` → a pending proposal)."""
    pattern = _PARAM if style == "route" else _SCHEMA_PARAM

    def value(match: re.Match[str]) -> str:
        name = match.group("name") if style == "route" else match.group(1)
        segment = route[: match.start()].rstrip("/").rsplit("/", 1)[-1]
        if segment in world["segments"]:
            return str(world["segments"][segment])
        if name in world and name != "segments":
            return str(world[name])
        pytest.fail(
            f"{route}: no object for parameter '{name}' after '{segment}/'. Add a builder to "
            f"the `world` fixture in {__name__} so the request reaches the permission check."
        )

    return pattern.sub(value, route)


# --- Walking the URL configuration and the schema ---------------------------------------------


def routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for p in (resolver or get_resolver()).url_patterns:
        if isinstance(p, URLResolver):
            yield from routes(p, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p.callback


def view_methods(callback: Any) -> set[str] | None:
    """The write methods a view implements, or None when it cannot be told (function views)."""
    cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if cls is None:
        return None
    return {m for m in WRITE_METHODS if hasattr(cls, m)}


def outside(route: str) -> bool:
    return any(route == p or (p and route.startswith(p)) for p in OUTSIDE)


def api_routes() -> list[tuple[str, Any]]:
    return [(r, cb) for r, cb in routes() if r.startswith("api/v1/") and not outside(r)]


def page_routes() -> list[tuple[str, Any]]:
    return [(r, cb) for r, cb in routes() if not r.startswith("api/") and not outside(r)]


def schema_writes(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any] | None]]:
    out = []
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if method in WRITE_METHODS:
                content = op.get("requestBody", {}).get("content", {})
                out.append((path, method, content.get("application/json", {}).get("schema")))
    return out


def normalized(path: str) -> str:
    """``/api/v1/proposals/{id}`` and ``api/v1/proposals/<int:pk>`` → ``/api/v1/proposals/{}``."""
    path = _PARAM.sub("{}", path)
    return "/" + _SCHEMA_PARAM.sub("{}", path).lstrip("/")


# --- Request bodies from the schema ----------------------------------------------------------


def example(
    schema: dict[str, Any],
    components: dict[str, Any],
    world: dict[str, Any],
    *,
    name: str = "",
    everything: bool = False,
) -> Any:
    """The smallest valid value of ``schema``, using real ids for fields that name objects."""
    if "$ref" in schema:
        return example(
            components[schema["$ref"].rsplit("/", 1)[-1]],
            components,
            world,
            name=name,
            everything=everything,
        )
    for key in ("oneOf", "anyOf", "allOf"):
        if schema.get(key):
            return example(schema[key][0], components, world, name=name, everything=everything)
    hints = {
        "memory": world["slug"],
        "slug": "audit-probe",
        "entry_id": world["entry_id"],
        "from_entry": world["entry_id"],
        "to_entry": world["inactive_entry_id"],
        "source": world["name"],
        "version": 1,
        "body": "An auditor tried to write this.",
    }
    if name in hints:
        return hints[name]
    if schema.get("enum"):
        return next(v for v in schema["enum"] if v is not None)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        wanted = props if everything else schema.get("required", [])
        return {k: example(props[k], components, world, name=k) for k in wanted if k in props}
    if kind == "array":
        items = schema.get("items", {})
        return [example(items, components, world, name=name)] if schema.get("minItems") else []
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if schema.get("format") == "date-time":
        return datetime.now(UTC).isoformat()
    return "audit-probe"


# --- The database must not move ---------------------------------------------------------------


def fingerprint() -> str:
    digest = hashlib.sha256()
    for model in sorted(apps.get_models(), key=lambda m: m._meta.label):
        if model is Session:
            continue
        rows = model._default_manager.order_by("pk").values_list()
        digest.update(model._meta.label.encode())
        digest.update(repr(list(rows)).encode())
    return digest.hexdigest()


# --- The tests ----------------------------------------------------------------------------


def test_the_schema_documents_every_api_write_route_and_only_those(api, auditor):
    schema = api.as_(auditor).get("/api/v1/schema/?format=json").json()
    documented = {(normalized(p), m) for p, m, _ in schema_writes(schema)}
    implemented = {
        (normalized(r), m)
        for r, cb in api_routes()
        for m in (view_methods(cb) or set())
        if r not in ("api/v1/schema/", "api/v1/docs/")
    }
    assert documented == implemented


def schema_bodies(schema: dict[str, Any], world: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """A valid request body per documented (path, method), built from the schema."""
    components = schema["components"]["schemas"]
    return {
        (normalized(path), method): (
            example(body, components, world, everything=method == "patch") if body else None
        )
        for path, method, body in schema_writes(schema)
    }


def test_an_auditor_key_is_refused_on_every_api_route_and_method(api, world, auditor):
    client = api.as_(auditor)
    bodies = schema_bodies(client.get("/api/v1/schema/?format=json").json(), world)
    before = fingerprint()
    checked = 0
    for route, callback in api_routes():
        methods = view_methods(callback)
        assert methods is not None, f"{route}: API views are classes"
        path = "/" + fill(route, world)
        for method in WRITE_METHODS:
            r = client.request(
                method.upper(),
                path,
                json=bodies.get((normalized(route), method)),
                headers={"Idempotency-Key": f"probe-{checked}"},
            )
            checked += 1
            if route in READS_BY_POST and method in methods:
                expected = 200
            elif method in methods:
                expected = 403
            else:
                expected = 405
            assert r.status_code == expected, (method, path, r.status_code, r.text[:300])
    assert checked >= 4 * 20
    assert fingerprint() == before


def test_an_auditor_key_is_refused_on_every_documented_write_with_a_valid_body(api, world, auditor):
    """Bodies come from the schema, so the refusal cannot be a validation error."""
    client = api.as_(auditor)
    schema = client.get("/api/v1/schema/?format=json").json()
    bodies = schema_bodies(schema, world)
    reads = {normalized(r) for r in READS_BY_POST}
    before = fingerprint()
    writes = schema_writes(schema)
    assert len(writes) >= 15
    for i, (path, method, _) in enumerate(writes):
        url = fill(path, world, style="schema")
        body = bodies[(normalized(path), method)]
        r = client.request(
            method.upper(), url, json=body, headers={"Idempotency-Key": f"probe-body-{i}"}
        )
        if normalized(path) in reads:
            assert r.status_code == 200, (method, url, body, r.status_code, r.text[:300])
            continue
        assert r.status_code == 403, (method, url, body, r.status_code, r.text[:300])
        assert r.json()["error"]["code"] in ("forbidden", "self_approval"), r.text
    assert fingerprint() == before


def test_an_auditor_browser_session_is_refused_on_every_api_write(api, world, auditor):
    client = logged_in("ada")
    schema = client.get("/api/v1/schema/?format=json").json()
    bodies = schema_bodies(schema, world)
    reads = {normalized(r) for r in READS_BY_POST}
    before = fingerprint()
    for path, method, _ in schema_writes(schema):
        url = fill(path, world, style="schema")
        body = bodies[(normalized(path), method)]
        r = client.generic(method.upper(), url, data=_json(body), content_type="application/json")
        expected = 200 if normalized(path) in reads else 403
        assert r.status_code == expected, (method, url, r.status_code, r.content[:300])
    assert fingerprint() == before


def _json(body: Any) -> str:
    import json

    return json.dumps(body) if body is not None else ""


def test_an_auditor_browser_session_is_refused_on_every_page_write(api, world, auditor):
    client = logged_in("ada")
    before = fingerprint()
    pages = page_routes()
    assert {r for r, _ in pages} >= {
        "audit/",
        "memories/<slug:slug>/entries/<str:entry_id>/",
        "memories/<slug:slug>/revisions/<int:number>/",
    }
    for route, callback in pages:
        path = "/" + fill(route, world)
        methods = view_methods(callback)
        for method in WRITE_METHODS:
            r = client.generic(method.upper(), path)
            if methods is None:  # a function view: refused either way
                allowed: tuple[int, ...] = (403, 405)
            else:
                allowed = (403,) if method in methods else (405,)
            assert r.status_code in allowed, (method, path, r.status_code)
    assert fingerprint() == before


class _Forms(HTMLParser):
    """Collects (method, action) of every form and every hx-post/put/patch/delete control."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and a.get("method", "get").lower() in WRITE_METHODS:
            self.found.append((a["method"].lower(), a.get("action", "")))
        for method in WRITE_METHODS:
            if f"hx-{method}" in a:
                self.found.append((method, a[f"hx-{method}"]))


def test_every_form_on_every_page_refuses_an_auditor(api, world, auditor, reviewer, staff):
    targets: set[tuple[str, str]] = set()
    viewers = [logged_in(u) for u in ("root", "rita", "ada")]
    rendered = 0
    for route, _ in page_routes():
        page = "/" + fill(route, world)
        for viewer in viewers:
            r = viewer.get(page)
            if r.status_code != 200 or "text/html" not in r.get("Content-Type", ""):
                continue
            rendered += 1
            parser = _Forms()
            parser.feed(r.content.decode())
            for method, action in parser.found:
                url = urljoin(page, action or page)
                if not outside(url.lstrip("/")) and not url.startswith(reverse("logout")):
                    targets.add((method, url))
    assert rendered >= 3 * len(viewers)
    client = logged_in("ada")
    before = fingerprint()
    for method, url in sorted(targets):
        r = client.generic(method.upper(), url)
        assert r.status_code in (403, 405), (method, url, r.status_code)
    assert fingerprint() == before


@pytest.mark.django_db
def test_django_admin_refuses_an_auditor(auditor):
    client = logged_in("ada")
    before = fingerprint()
    for model in admin.site._registry:
        info = (model._meta.app_label, model._meta.model_name)
        for url in (
            reverse("admin:{}_{}_add".format(*info)),
            reverse("admin:{}_{}_changelist".format(*info)),
        ):
            r = client.post(url, {})
            assert r.status_code == 302 and r["Location"].startswith("/admin/login/"), url
    assert fingerprint() == before


def test_reads_by_post_still_exist():
    """The exemptions above must name real routes (or be removed)."""
    names = {r for r, _ in routes()}
    assert set(READS_BY_POST) <= names
