"""Throttling (API.md "Throttling"): per key, per address for no or a bad key, login lockout.

The suite raises the rates in tests/conftest.py; these tests set small ones again, so they run
in a few hundred requests while exercising the same code path as the production defaults.
"""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture
def rates(settings, production_cache):
    # The counters where production keeps them (the database's cache), not the suite's.
    settings.STEWARD_THROTTLE_RATES = {"key": "30/min", "anon": "5/min"}
    return settings.STEWARD_THROTTLE_RATES


def assert_throttled(r) -> None:
    assert r.status_code == 429, (r.status_code, r.text[:200])
    assert r.json()["error"]["code"] == "throttled", r.text
    assert int(r.headers["Retry-After"]) > 0, r.headers


def test_the_production_defaults_are_600_per_key_and_20_per_address():
    from config import settings as production

    rates = production.STEWARD_THROTTLE_RATES
    assert (rates["key"], rates["anon"]) == ("600/min", "20/min") or (
        # an operator may override them from the environment
        __import__("os").environ.get("THROTTLE_KEY_RATE")
    )


def test_a_key_is_throttled_after_its_budget(api, agent, rates):
    client = api.as_(agent)
    for i in range(30):
        r = client.get("/api/v1/memories/acme")
        assert r.status_code == 200, (i, r.text)
    assert_throttled(client.get("/api/v1/memories/acme"))


def test_keys_have_separate_budgets(api, agent, other_agent, rates):
    for _ in range(30):
        api.as_(agent).get("/api/v1/memories/acme")
    assert_throttled(api.as_(agent).get("/api/v1/memories/acme"))
    assert api.as_(other_agent).get("/api/v1/memories/acme").status_code == 200


def test_requests_without_a_key_are_throttled_per_address(api, memory, rates):
    for _ in range(5):
        assert api.get("/api/v1/memories/acme").status_code == 401
    assert_throttled(api.get("/api/v1/memories/acme"))


def test_bad_keys_are_throttled_per_address(api, agent, rates):
    for i in range(5):
        r = api.as_(f"nokey{i}.guess").get("/api/v1/memories/acme")
        assert r.status_code == 401, r.text
    assert_throttled(api.as_("another.guess").get("/api/v1/memories/acme"))
    # A forged X-Forwarded-For does not buy a fresh budget.
    r = api.as_("x.y").get("/api/v1/memories/acme", headers={"X-Forwarded-For": "203.0.113.9"})
    assert_throttled(r)
    # A valid key still works from the same address: its budget is its own.
    assert api.as_(agent).get("/api/v1/memories/acme").status_code == 200


def test_throttling_is_off_for_no_one_at_the_default_rate(api, agent, settings, production_cache):
    """600/min leaves room for a burst of 100 calls."""
    settings.STEWARD_THROTTLE_RATES = {"key": "600/min", "anon": "20/min"}
    codes = {api.as_(agent).get("/api/v1/memories/acme").status_code for _ in range(100)}
    assert codes == {200}


def _fail_login(client: Client, username: str) -> int:
    r = client.post("/accounts/login/", {"username": username, "password": "wrong"})
    return r.status_code


def test_browser_login_locks_out_after_ten_failures(reviewer):
    client = Client()
    for i in range(9):
        assert _fail_login(client, "rita") == 200, i  # the form again, with an error
    assert _fail_login(client, "rita") == 429  # the tenth failure locks out
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert r.status_code == 429
    assert b"Too many failed logins" in r.content
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_user_and_address(reviewer, other_reviewer):
    client = Client()
    for _ in range(10):
        _fail_login(client, "rita")
    # Another user from the same address still logs in.
    r = client.post("/accounts/login/", {"username": "ravi", "password": "pw-ravi-123"})
    assert r.status_code == 302, r.status_code
    # The same user from another address still logs in.
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    r = elsewhere.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert r.status_code == 302, r.status_code


def test_nine_failures_then_the_right_password_logs_in(reviewer):
    client = Client()
    for _ in range(9):
        _fail_login(client, "rita")
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert r.status_code == 302


def test_the_lockout_page_says_how_long_to_wait_in_words_and_in_retry_after(reviewer):
    client = Client()
    for _ in range(10):
        _fail_login(client, "rita")
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw-rita-123"})
    assert r.status_code == 429
    page = r.content.decode()
    assert "Try again in 15 minutes." in page, page
    assert "PT15M" not in page  # axes' ISO 8601 duration is no sentence
    assert r["Retry-After"] == "900"
    assert "script-src 'self'" in r["Content-Security-Policy"]
    assert r["X-Frame-Options"] == "DENY"


def test_the_lockout_wait_reads_in_minutes_or_whole_hours():
    from lib.lockout import in_words

    assert in_words(900) == "15 minutes"
    assert in_words(60) == "1 minute"
    assert in_words(30) == "1 minute"
    assert in_words(3600) == "1 hour"
    assert in_words(7200) == "2 hours"
    assert in_words(5400) == "90 minutes"
