"""Bidirectional override and isolate controls (U+202A–U+202E, U+2066–U+2069) are refused —
400 ``invalid`` naming the field and the character — in Memory names, entry bodies, evidence,
reasons, rationales and comments, so no stored text can display as something else in the pages
or exports. The implicit direction marks of ordinary right-to-left text are kept. Real HTTP,
on whichever backend the suite runs."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Entry, Memory
from proposals.models import ProposalComment
from tests.factories import add_via_api

CONTROLS = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
]
E = "/api/v1/memories/acme/entries"


def assert_refused(r: Any, field: str, char: str) -> None:
    assert r.status_code == 400, (r.status_code, r.text)
    error = r.json()["error"]
    assert error["code"] == "invalid"
    text = str(error["details"])
    assert field in text and f"U+{ord(char):04X}" in text, error


@pytest.mark.parametrize("char", CONTROLS)
def test_a_memory_name_or_body_with_a_bidi_control_is_refused(api, reviewer, agent, char):
    r = api.as_(reviewer).post("/api/v1/memories", {"slug": "team-x", "name": f"Team {char}evil"})
    assert_refused(r, "name", char)
    assert not Memory.objects.filter(slug="team-x").exists()
    r = api.as_(agent).post(E, {"body": f"Deploys run at {char}02:00 UTC", "kind": "fact"})
    assert_refused(r, "body", char)
    assert not Entry.objects.exists()


def test_every_free_text_field_refuses_them(api, agent, reviewer):
    a, rv = api.as_(agent), api.as_(reviewer)
    rlo = "\u202e"
    r = a.post(
        E,
        {
            "body": "Ok",
            "kind": "fact",
            "evidence": [{"source": "repo", "ref": "x", "quote": f"q{rlo}"}],
        },
    )
    assert_refused(r, "quote", rlo)
    entry = add_via_api(a, "Deploys run nightly at 02:00 UTC")["entry_id"]
    other = add_via_api(a, "Backups run nightly at 03:00 UTC")["entry_id"]
    assert_refused(a.post(f"{E}/{entry}/forget", {"reason": f"old {rlo}"}), "reason", rlo)
    assert_refused(
        a.post(f"{E}/{entry}/revise", {"body": f"Deploys run at 04:00 {rlo}UTC"}), "body", rlo
    )
    proposal = {
        "memory": "acme",
        "kind": "cleanup",
        "rationale": f"Both obsolete {rlo}",
        "entries": [{"entry_id": entry, "version": 1}, {"entry_id": other, "version": 1}],
    }
    r = a.post("/api/v1/proposals", proposal, headers={"Idempotency-Key": "bidi-1"})
    assert_refused(r, "rationale", rlo)
    proposal["rationale"] = "Both obsolete"
    r = a.post("/api/v1/proposals", proposal, headers={"Idempotency-Key": "bidi-2"})
    assert r.status_code == 201, r.text
    pid = r.json()["id"]
    comment = rv.post(f"/api/v1/proposals/{pid}/comments", {"body": f"Why {rlo}?"})
    assert_refused(comment, "body", rlo)
    reject = rv.post(f"/api/v1/proposals/{pid}/reject", {"reason": "wrong", "comment": f"No {rlo}"})
    assert_refused(reject, "comment", rlo)
    assert not ProposalComment.objects.exists()
    assert a.get(f"{E}/{entry}").json()["version"] == 1


def test_right_to_left_text_with_direction_marks_is_kept(api, agent):
    body = "\u05d4\u05e4\u05e8\u05d9\u05e1\u05d4 \u200fv2.1\u200f \u0645\u062b\u0627\u0644\u061c"
    created = add_via_api(api.as_(agent), body)
    assert api.as_(agent).get(f"{E}/{created['entry_id']}").json()["body"] == body


def test_a_secret_behind_a_bidi_control_is_still_named_a_secret(api, agent):
    r = api.as_(agent).post(E, {"body": "\u202eAKIAIOSFODNN7EXAMPLE", "kind": "fact"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected"
