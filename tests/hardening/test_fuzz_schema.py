"""schemathesis against the project's own OpenAPI document, over real HTTP (bounded examples).

For every documented operation, with a reviewer key: schema-valid requests with random path
parameters, the same with real objects in the path (so requests reach the views' logic), and
schema-violating bodies. Every response must be no 5xx, have a documented status, content type
and headers, match the documented body schema, and every error must be in the envelope. The test
prints its figures (``-s``); docs/reliability.md quotes them.

``FUZZ_EXAMPLES`` (default 6) bounds the examples per operation and pass.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hsettings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.audit.test_auditor_refused import world  # noqa: F401  (fixture)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def real_path(operation: Any, objects: dict[str, Any]) -> dict[str, Any]:
    values = {
        "slug": objects["slug"],
        "entry_id": objects["entry_id"],
        "name": objects["name"],
        "session_id": objects["session_id"],
        "number": 1,
        "job": "l1",
        "proposal_id": objects["segments"].get("proposals", 1),
        "operation_id": objects["segments"].get("operations", 1),
        "pk": objects["segments"].get("runs", 1),
    }
    names = [p.name for p in operation.path_parameters]
    return {n: values.get(n, 1) for n in names}


def envelope_problem(response: Any) -> str | None:
    if response.status_code < 400:
        return None
    try:
        error = response.json()["error"]
    except Exception:
        return f"not JSON: {response.text[:120]!r}"
    if not (isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
        return f"no code/message: {error!r}"[:200]
    if not isinstance(error.get("details"), dict):
        return f"details not an object: {error!r}"[:200]
    return None


def test_fuzzing_the_schema_finds_no_5xx_no_nonconformance_and_no_bare_error(
    api,
    world,  # noqa: F811
    reviewer,
    capsys,
):
    raw = api.as_(reviewer).get("/api/v1/schema/?format=json").json()
    schema = schemathesis.openapi.from_dict(raw)
    headers = {"Authorization": f"Bearer {reviewer.secret}"}
    stats: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    failures: list[str] = []

    def exercise(operation: Any, mode: GenerationMode, real: bool) -> None:
        @hsettings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            if real:
                case.path_parameters = real_path(operation, world)
            response = case.call(base_url=api.base, headers=headers)
            stats["requests"] += 1
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                stats["5xx"] += 1
            label = f"{operation.method.upper()} {operation.path} → {response.status_code}"
            try:
                case.validate_response(response, checks=CHECKS)
            except (
                Exception,
                BaseExceptionGroup,
            ) as exc:  # a check failed: keep going, report all at the end
                stats["nonconforming"] += 1
                failures.append(f"{label}: {' '.join(str(exc).split())[:600]}")
            problem = envelope_problem(response)
            if problem:
                stats["bare_errors"] += 1
                failures.append(f"{label}: {problem}")

        run()

    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        operations += 1
        exercise(operation, GenerationMode.POSITIVE, real=False)
        if operation.path_parameters:
            exercise(operation, GenerationMode.POSITIVE, real=True)
        if operation.body:
            exercise(operation, GenerationMode.NEGATIVE, real=bool(operation.path_parameters))

    total = stats["requests"]
    conformance = 100.0 * (total - stats["nonconforming"]) / max(total, 1)
    with capsys.disabled():
        print(
            f"\nschemathesis: {total} requests over {operations} operations; "
            f"5xx: {stats['5xx']}; conforming: {conformance:.1f} %; "
            f"errors outside the envelope: {stats['bare_errors']}; "
            f"statuses: {dict(sorted(statuses.items()))}"
        )
    assert operations >= 30
    assert total >= operations * EXAMPLES
    assert not failures, "\n".join(sorted(set(failures))[:40])
