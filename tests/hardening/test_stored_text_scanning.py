"""Secrets and personal data are refused in every stored text field and stored header — also
when fullwidth letters or invisible characters try to hide them — with 422 and nothing stored."""

from __future__ import annotations

import sys

import pytest

from memory import actions
from memory.admission import check_stored_text, scan_form
from memory.exceptions import PersonalDataDetected, SecretDetected
from memory.models import AuditEvent, Entry, Memory, Source
from proposals.models import IdempotencyKey, Proposal
from tests.factories import add_via_api

E = "/api/v1/memories/acme/entries"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
FULLWIDTH_AWS = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in AWS)
DISGUISES = {
    "plain": AWS,
    "fullwidth": FULLWIDTH_AWS,
    "zero_width_space": "AKIA\u200bIOSFODNN7EXAMPLE",
    "word_joiner": GITHUB[:4] + "\u2060" + GITHUB[4:],
    "soft_hyphen": "AKIAIOSF\u00adODNN7EXAMPLE",
    "bidi_override": "\u202eAKIAIOSFODNN7EXAMPLE",
    "variation_selector": "AKIA\ufe0fIOSFODNN7EXAMPLE",
    "tag_characters": "AKIA\U000e0041IOSFODNN7EXAMPLE",
}
CARD = "4111 1111 1111 1111"
SSN = "536-90-4399"


def test_scan_form_folds_fullwidth_and_drops_invisible_characters():
    assert scan_form(FULLWIDTH_AWS) == AWS
    assert scan_form("a\u200bb\u200dc\u2060d\ufeffe") == "abcde"
    assert scan_form("Grüße, 東京") == "Grüße, 東京"


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
def test_a_disguised_secret_is_still_a_secret(disguise):
    with pytest.raises(SecretDetected):
        check_stored_text("body", f"The key is {DISGUISES[disguise]} for CI")


@pytest.mark.parametrize("disguise", sorted(DISGUISES))
def test_a_disguised_secret_in_a_body_is_refused_over_http(api, agent, disguise):
    r = api.as_(agent).post(E, {"body": f"Use {DISGUISES[disguise]} to deploy", "kind": "fact"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "secret_detected"
    assert Entry.objects.count() == 0


def test_a_secret_as_session_id_is_refused(api, agent):
    r = api.as_(agent).post(
        E,
        {
            "body": "Working on billing",
            "kind": "working_note",
            "tier": "session",
            "session_id": AWS,
        },
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    r = api.as_(agent).post(f"/api/v1/memories/acme/sessions/{AWS}/end")
    assert r.status_code == 422, r.text
    assert not AuditEvent.objects.filter(action="session.ended").exists()


def test_a_secret_as_source_name_is_refused(api, agent):
    r = api.as_(agent).post("/api/v1/sources", {"name": GITHUB, "description": "x"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert not Source.objects.filter(name=GITHUB).exists()


@pytest.mark.parametrize(
    "name", [f"Team {AWS}", f"Team {FULLWIDTH_AWS}", "Team AKIA\u200bIOSFODNN7EXAMPLE"]
)
def test_a_secret_in_a_memory_name_is_refused(api, staff_reviewer, name):
    r = api.as_(staff_reviewer).post("/api/v1/memories", {"slug": "leaky", "name": name})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert not Memory.objects.filter(slug="leaky").exists()


def test_a_secret_as_idempotency_key_is_refused_and_not_audited(api, agent):
    a = api.as_(agent)
    x = add_via_api(a, "Deploy runs at 02:00 UTC via deploy.sh", dedupe=False)
    y = add_via_api(a, "Deploys run nightly at 02:00 UTC", dedupe=False)
    body = {
        "memory": "acme",
        "kind": "consolidation",
        "rationale": "Same schedule twice",
        "target": {"entry_id": x["entry_id"], "version": 1},
        "redundant": [{"entry_id": y["entry_id"], "version": 1}],
        "body": "Deploys run nightly at 02:00 UTC via deploy.sh",
    }
    r = a.post("/api/v1/proposals", body, headers={"Idempotency-Key": GITHUB})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert Proposal.objects.count() == 0 and IdempotencyKey.objects.count() == 0
    assert not AuditEvent.objects.filter(payload__icontains="ghp_").exists()


@pytest.mark.parametrize(
    "text",
    [
        f"Pay with {CARD}",
        "Card 4111-1111-1111-1111 on file",
        "Card ４１１１ １１１１ １１１１ １１１１ on file",
        "Card 4111\u200b1111\u200b1111\u200b1111 on file",
        "Amex 3782 822463 10005",
        f"SSN {SSN}",
        "CPF 390.533.447-05",
        "DNI 12345678Z",
    ],
)
def test_cards_and_government_ids_are_refused_by_default(api, agent, text):
    r = api.as_(agent).post(E, {"body": text, "kind": "fact"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "personal_data_detected"
    assert "4111" not in r.text and "4399" not in r.text  # the value is never echoed
    assert Entry.objects.count() == 0


@pytest.mark.parametrize(
    "text",
    [
        "Build 4111111111111112 failed",  # fails the Luhn check
        "Ticket 1234567890123456 is closed",
        "Released at 2024-05-01 12:00:00 on port 8080",
        "Commit 3f786850e387550fdab836ed7e6dc881de23001b and uuid 550e8400-e29b-41d4-a716-446655440000",
        "Call +1 650-253-0000 or mail ops@example.com",  # allowed by default
        "Serial 078-05-1120",  # a number reserved and never issued as an SSN
    ],
)
def test_ordinary_numbers_are_not_personal_data(api, agent, text):
    r = api.as_(agent).post(E, {"body": text, "kind": "fact"})
    assert r.status_code == 201, r.text


def test_personal_data_in_evidence_and_reasons_is_refused(api, agent):
    a = api.as_(agent)
    r = a.post(
        E,
        {
            "body": "Refund issued",
            "kind": "fact",
            "evidence": [{"source": "chat", "ref": "m1", "quote": f"card {CARD}"}],
        },
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected", r.text
    eid = add_via_api(a, "Refund issued")["entry_id"]
    r = a.post(f"{E}/{eid}/forget", {"reason": f"customer SSN {SSN}"})
    assert r.status_code == 422, r.text


def test_the_policy_chooses_what_is_refused(api, agent, reviewer):
    a, rv = api.as_(agent), api.as_(reviewer)
    assert a.post(E, {"body": "Mail ops@example.com", "kind": "fact"}).status_code == 201
    r = rv.patch(
        "/api/v1/memories/acme", {"policy": {"personal_data": {"refuse": ["email", "phone"]}}}
    )
    assert r.status_code == 200, r.text
    r = a.post(E, {"body": "Mail alice@example.org for access", "kind": "fact"})
    assert r.status_code == 422 and r.json()["error"]["details"]["body"] == [
        "personal data detected: email"
    ]
    r = a.post(E, {"body": "Phone +44 20 7946 0958 on call", "kind": "fact"})
    assert r.status_code == 422 and "phone" in r.json()["error"]["details"]["body"][0]
    # Cards are no longer refused in this Memory's bodies: the policy said email and phone only.
    assert a.post(E, {"body": f"Test card {CARD}", "kind": "fact"}).status_code == 201


@pytest.mark.parametrize(
    "section",
    [{"refuse": ["iban"]}, {"refuse": "card"}, {"block": ["card"]}, ["card"]],
)
def test_personal_data_policy_is_validated(api, reviewer, section):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": {"personal_data": section}})
    assert r.status_code == 400, r.text
    assert "policy.personal_data" in r.json()["error"]["details"]


def test_a_revise_is_scanned_with_the_memory_policy(memory, agent):
    entry = actions.add_entry(
        memory, actor=agent.actor, body="Billing contact pending", kind="fact"
    ).entry
    with pytest.raises(PersonalDataDetected):
        actions.revise_entry(
            memory, actor=agent.actor, entry_uid=entry.uid, body=f"Billing card {CARD}"
        )
    assert entry.versions.count() == 1


@pytest.fixture
def staff_reviewer(memory):
    from tests.conftest import make_key

    return make_key("platform", "reviewer")


def test_scans_in_concurrent_threads_all_find_the_secret():
    """The scanner's plugins are process-wide settings: a scan in one thread must never run
    with another thread's half-restored configuration (which found nothing)."""
    from concurrent.futures import ThreadPoolExecutor

    from memory.admission import find_secrets

    texts = [f"Deploy note {i}: the key is {AWS} for CI" for i in range(400)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often, as under load
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(find_secrets, texts))
    finally:
        sys.setswitchinterval(interval)
    assert all(r == ["AWS Access Key"] for r in results), sorted({tuple(r) for r in results})


# --- Issue 38: token types, disguises, encodings, every field, splits --------------------------

NEW_TOKENS = {
    "github_fine_grained": "github_pat_11ABCDEFG0123456789_" + "a1B2c3D4e5" * 6,
    "google_api_key": "AIzaSyD-abcdefghijklmnopqrstuvwxyz12345",
    "npm": "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "anthropic": "sk-ant-api03-" + "Ab3_xY9-" * 12,
    "vault": "hvs.CAESIJabcdefghijklmnopqrstuvwxyz0123456789",
    "digitalocean": "dop_v1_" + "a1b2c3d4" * 8,
    "shopify": "shpat_" + "a1b2c3d4" * 4,
    "age": "AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQQPZRY9X8GF2TVDW0S3JN54KHC",
}


@pytest.mark.parametrize("name", sorted(NEW_TOKENS))
def test_token_types_beyond_detect_secrets_are_secrets(name):
    with pytest.raises(SecretDetected):
        check_stored_text("body", f"The key is {NEW_TOKENS[name]} for CI")


@pytest.mark.parametrize(
    "disguised",
    [
        "AKIA\u2028IOSFODNN7EXAMPLE",  # line separator
        "AKIA\u00a0IOSFODNN7EXAMPLE",  # no-break space
        "AKIA\u2800IOSFODNN7EXAMPLE",  # braille blank
        "AKIA\u0301IOSFODNN7EXAMPLE",  # combining acute
        "\u0410KIAIOSFODNN7EXAMPLE",  # Cyrillic A
        "AKIAI\u039fSFODNN7EXAMPLE",  # Greek Omicron
    ],
)
def test_separators_marks_and_look_alikes_do_not_hide_a_key(disguised):
    with pytest.raises(SecretDetected):
        check_stored_text("body", f"deploy with {disguised}")


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: __import__("base64").b64encode(t.encode()).decode(),
        lambda t: t.encode().hex(),
        lambda t: "".join(f"%{b:02X}" for b in t.encode()),
        lambda t: "".join(f"&#{ord(c)};" for c in t),
    ],
    ids=["base64", "hex", "percent", "html"],
)
def test_encoded_secrets_are_secrets(encode):
    with pytest.raises(SecretDetected):
        check_stored_text("body", f"blob: {encode(GITHUB)}")


@pytest.mark.parametrize(
    "text",
    [
        "SSN 212 67 4482",
        "BSN 111222333 van de klant",
        "SSN ٥٣٦-٩٠-٤٣٩٩",
        "Jane's SSN is 078-05-1120",
        "PESEL 44051401359",
        "personnummer 811228-9874",
        "National Insurance number AB 12 34 56 C",
        "card ٤١١١ ١١١١ ١١١١ ١١١١",
    ],
)
def test_more_national_ids_and_scripts_are_refused(text):
    with pytest.raises(PersonalDataDetected):
        check_stored_text("body", text)


def test_controls_from_every_corpus_are_not_refused():
    from evaluation.secrets_corpus import CONTROL, items
    from evaluation.sections.secrets import flagged, other_corpora_texts

    controls = [i for i in items() if i.group == CONTROL]
    assert len(controls) >= 200
    assert [i.text for i in controls if flagged(i)] == []
    for text in other_corpora_texts():
        check_stored_text("body", text)


def test_the_corpus_is_caught(settings):
    from evaluation.secrets_corpus import CONTROL, items
    from evaluation.sections.secrets import flagged

    hostile = [i for i in items() if i.group != CONTROL]
    assert len([i for i in hostile if i.group == "secret"]) >= 300
    assert len([i for i in hostile if i.group == "personal"]) >= 120
    assert [i.id for i in hostile if not flagged(i)] == []


def test_policy_version_is_scanned(api, agent):
    a = api.as_(agent)
    x = add_via_api(a, "Scratch note to clean up", dedupe=False)
    body = {
        "memory": "acme",
        "kind": "cleanup",
        "rationale": "Not needed",
        "entries": [{"entry_id": x["entry_id"], "version": 1}],
        "policy_version": GITHUB[:40],
    }
    r = a.post("/api/v1/proposals", body)
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert Proposal.objects.count() == 0


@pytest.mark.parametrize(
    "change",
    [
        {"glossary": {"Zephyr": f"the export job, key {GITHUB}"}},
        {"glossary": {"Zephyr": "export job key AKIA\u00a0IOSFODNN7EXAMPLE"}},
        {"webhook_url": "https://deploy:s3cretPassw0rd@hooks.example.com/notify"},
        {"webhook_url": f"https://hooks.example.com/notify?token={GITHUB}"},
    ],
)
def test_the_memory_policy_is_scanned(api, reviewer, change):
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": change})
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert "glossary" not in Memory.objects.get(slug="acme").policy
    assert not AuditEvent.objects.filter(action="memory.policy_changed").exists()


def test_the_policy_refusal_covers_every_field_of_the_memory(api, agent, reviewer):
    a, rv = api.as_(agent), api.as_(reviewer)
    r = rv.patch("/api/v1/memories/acme", {"policy": {"personal_data": {"refuse": ["email"]}}})
    assert r.status_code == 200, r.text
    r = a.post(E, {"body": "Refund issued", "kind": "fact",
                   "evidence": [{"source": "chat", "ref": "m1", "quote": "mail jane@example.org"}]})  # fmt: skip
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected"
    eid = add_via_api(a, "Refund issued")["entry_id"]
    r = a.post(f"{E}/{eid}/forget", {"reason": "asked by jane@example.org"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected"
    r = rv.patch("/api/v1/memories/acme", {"policy": {"glossary": {"Ops": "jane@example.org"}}})
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected"


def test_a_secret_split_across_two_fields_of_one_request_is_found(api, agent):
    r = api.as_(agent).post(
        E,
        {
            "body": "Deploy note: AKIAIOSF",
            "kind": "fact",
            "evidence": [{"source": "chat", "ref": "m1", "quote": "ODNN7EXAMPLE is the rest"}],
        },
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "secret_detected", r.text
    assert Entry.objects.count() == 0


@pytest.mark.parametrize(
    "first, second",
    [
        ("Call Jane back; her SSN is 078-05", "-1120, she said"),  # body ends it, quote goes on
        ("-1120, she said", "Call Jane back; her SSN is 078-05"),  # the quote ends it
        ("Jane's card: 4111 1111", "1111 1111 expires in May"),
        # A spelled email has no digit and no "@"; the digit far from the join used to be
        # what joined the two (and without it, the split was stored).
        (
            "Please write to jane [at] exam",
            "ple [dot] com when you can, thanks again, see you on 5 May",
        ),
        ("Please write to jane (at) exam", "ple (dot) com when you can"),
    ],
)
def test_personal_data_split_across_two_fields_of_one_request_is_found(
    api, agent, reviewer, first, second
):
    refuse = {"personal_data": {"refuse": ["card", "government_id", "email"]}}
    r = api.as_(reviewer).patch("/api/v1/memories/acme", {"policy": refuse})
    assert r.status_code == 200, r.text
    r = api.as_(agent).post(
        E,
        {
            "body": first,
            "kind": "fact",
            "evidence": [{"source": "chat", "ref": "m1", "quote": second}],
        },
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected", r.text
    assert Entry.objects.count() == 0


def test_personal_data_split_across_two_items_of_a_batch_is_found(api, agent):
    items = [{"body": f"Turn {i}: nothing to see here", "kind": "fact"} for i in range(30)]
    items[20] = {"body": "Jane: my SSN is 078-05", "kind": "fact"}
    items[21] = {"body": "-1120 by the way", "kind": "fact"}
    r = api.as_(agent).post(f"{E}/batch", {"entries": items})
    assert r.status_code == 422 and r.json()["error"]["code"] == "personal_data_detected", r.text
    assert Entry.objects.count() == 0


def test_a_saved_view_name_and_search_are_scanned(reviewer, client):
    from django.contrib.auth.models import User

    from review.models import SavedView

    client.force_login(User.objects.get(username="rita"))
    for data in ({"name": f"keys {GITHUB}", "q": ""}, {"name": "mine", "q": f"ssn {SSN}"}):
        r = client.post("/review/views/", data)
        assert r.status_code == 422, r.status_code
    assert not SavedView.objects.exists()


@pytest.mark.parametrize(
    "text",
    [
        "Her number is 212 67 4482",  # an SSN in groups of spaces, no label
        "SSN 212 67 4482",
        "BSN 111222333",  # a BSN after its label (a bare one: see below)
        "citizen service number 111222333",
        "burgerservicenummer: 1112.22.333",
        "٢١٢-٦٧-٤٤٨٢ is on the form",  # Arabic-Indic digits of a valid SSN
        "SSN ٠٧٨-٠٥-١١٢٠",
        "Jane's SSN is 078-05-1120",  # never issued, but shaped and labelled as one
    ],
)
def test_the_personal_data_the_probe_found_stored_is_refused_over_http(api, agent, text):
    r = api.as_(agent).post(E, {"body": text, "kind": "fact"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "personal_data_detected"
    assert Entry.objects.count() == 0


@pytest.mark.parametrize(
    "text",
    [
        # A bare 9-digit number is not taken for a BSN by its check digit alone: about one in
        # eleven 9-digit numbers passes it (2 of the 704 controls would have been refused).
        "Kafka offset 722874133 on partition 9 is the replay start",
        "Order 111222333 shipped",
    ],
)
def test_a_bare_nine_digit_number_is_not_a_bsn(api, agent, text):
    r = api.as_(agent).post(E, {"body": text, "kind": "fact"})
    assert r.status_code == 201, r.text
