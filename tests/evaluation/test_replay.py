"""``manage.py replay``: a candidate policy's effect on recorded or given queries."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from memory import actions
from memory.models import AuditEvent, Memory
from proposals.models import Proposal

QUERY = "alpha beta rotation policy"


@pytest.fixture
def replay_memory(memory, staff) -> tuple[Memory, dict[str, str]]:
    """Plain RRF puts two short unverified notes above the attested constraint (shorter texts
    win lexical ties); quality ranking lifts the constraint two ranks."""
    relevant = actions.add_entry(
        memory,
        actor=staff,
        body="alpha beta rotation policy: rotate the signing keys every ninety days on all hosts",
        kind="constraint",
        evidence=[{"source": "repo", "ref": "policy/keys.md"}],
    )
    note_a = actions.add_entry(
        memory, actor=staff, body="alpha beta rotation policy maybe", kind="working_note"
    )
    note_b = actions.add_entry(
        memory, actor=staff, body="alpha beta rotation policy draft idea", kind="working_note"
    )
    retired = actions.add_entry(
        memory, actor=staff, body="alpha beta rotation policy was yearly", kind="fact"
    )
    actions.forget_entry(memory, actor=staff, entry_uid=retired.entry.uid, reason="outdated")
    return memory, {
        "relevant": relevant.entry.uid,
        "note_a": note_a.entry.uid,
        "note_b": note_b.entry.uid,
        "retired": retired.entry.uid,
    }


def files(tmp_path, policy, queries):
    p = tmp_path / "policy.json"
    p.write_text(json.dumps(policy))
    q = tmp_path / "queries.txt"
    q.write_text(queries)
    return str(p), str(q)


def test_replay_shows_the_known_entry_moving_up(replay_memory, tmp_path, capsys):
    memory, uids = replay_memory
    policy, queries = files(tmp_path, {"quality_ranking": True}, f"{QUERY}\nunrelated words\n")
    out = tmp_path / "replay.json"
    call_command(
        "replay",
        "--memory",
        memory.slug,
        "--policy",
        policy,
        "--queries",
        queries,
        "--json",
        str(out),
    )
    report = json.loads(out.read_text())
    assert report["source"] == "query_file"
    assert report["candidate_policy"] == {"quality_ranking": True}
    first = report["queries"][0]
    assert first["current"][:3] == [uids["note_a"], uids["note_b"], uids["relevant"]]
    assert first["candidate"][0] == uids["relevant"]
    moved = {m["entry_id"]: (m["before"], m["after"]) for m in first["moved"]}
    assert moved[uids["relevant"]] == (3, 1)
    # quality never changes membership: nothing enters or leaves the top k
    assert first["entered"] == [] and first["left"] == []
    assert first["validity_filtered"]["inactive"] == 1
    assert uids["retired"] not in first["current"] + first["candidate"]
    assert report["queries"][1]["changed"] is False
    assert report["summary"]["queries_changed"] == 1
    printed = capsys.readouterr().out
    assert " 3 → 1" in printed and uids["relevant"] in printed
    # read-only: the stored policy is untouched
    memory.refresh_from_db()
    assert memory.policy == {}


def test_replay_with_the_same_policy_changes_nothing(replay_memory, tmp_path):
    memory, _ = replay_memory
    policy, queries = files(tmp_path, {}, json.dumps([{"query": QUERY, "intent": "current"}]))
    out = tmp_path / "replay.json"
    call_command(
        "replay",
        "--memory",
        memory.slug,
        "--policy",
        policy,
        "--queries",
        queries,
        "--json",
        str(out),
    )
    report = json.loads(out.read_text())
    assert report["summary"]["queries_changed"] == 0
    assert report["queries"][0]["intent"] == "current"


def test_replay_refuses_bad_input(replay_memory, tmp_path):
    memory, _ = replay_memory
    policy, queries = files(tmp_path, {"no_such_key": 1}, QUERY)
    with pytest.raises(CommandError, match="no_such_key"):
        call_command("replay", "--memory", memory.slug, "--policy", policy, "--queries", queries)
    good, _ = files(tmp_path, {"quality_ranking": True}, QUERY)
    with pytest.raises(CommandError, match="No memory"):
        call_command("replay", "--memory", "nope", "--policy", good, "--queries", queries)
    # no query file and no recorded recall events
    with pytest.raises(CommandError, match="no recorded queries"):
        call_command("replay", "--memory", memory.slug, "--policy", good)


def test_replay_page_shows_the_move_to_a_reviewer(client, reviewer, replay_memory):
    memory, uids = replay_memory
    client.login(username="rita", password="pw-rita-123")
    url = f"/memories/{memory.slug}/replay/"
    blank = client.get(url)
    assert blank.status_code == 200 and b"Replay" in blank.content
    r = client.get(
        url, {"run": "1", "policy": '{"quality_ranking": true}', "queries": QUERY, "limit": "10"}
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert "<strong>1</strong> change" in html
    row = html.split(uids["relevant"], 1)[1].split("</tr>", 1)[0]
    assert "3 → 1" in row
    bad = client.get(url, {"run": "1", "policy": '{"quality_ranking": "yes"}', "queries": QUERY})
    assert bad.status_code == 422 and b"quality_ranking" in bad.content
    memory.refresh_from_db()
    assert memory.policy == {}


def test_replay_page_is_for_reviewers_auditors_and_staff(client, replay_memory):
    from django.contrib.auth.models import User

    memory, _ = replay_memory
    url = f"/memories/{memory.slug}/replay/"
    assert client.get(url).status_code == 302  # login first
    User.objects.create_user("nobody", password="pw-nobody-1")
    client.login(username="nobody", password="pw-nobody-1")
    assert client.get(url).status_code == 403


def test_replay_page_speaks_to_a_browser_user(client, reviewer, replay_memory):
    """The page names the shell command as an aside, says where the queries came from in words
    (not the report's source code), and its refusals name no command-line option."""
    memory, _ = replay_memory
    client.login(username="rita", password="pw-rita-123")
    url = f"/memories/{memory.slug}/replay/"
    blank = client.get(url).content.decode()
    assert "The same as <code>manage.py replay</code>" not in blank
    assert f"From a shell on the server, <code>manage.py replay --memory {memory.slug}</code>" in (
        blank
    )
    ran = client.get(url, {"run": "1", "queries": f"{QUERY}\nsigning keys"}).content.decode()
    assert "query_file" not in ran
    assert "2 queries typed in, top 10:" in ran
    none = client.get(url, {"run": "1", "queries": ""})
    assert none.status_code == 422
    assert "query file" not in none.content.decode()


def _replayed_form(client, url: str, policy: str) -> dict[str, str]:
    """The enable form under a replay's report, as the page rendered it."""
    html = client.get(url, {"run": "1", "policy": policy, "queries": QUERY}).content.decode()
    form = html.split('data-testid="enable-policy"', 1)[1].split("</form>", 1)[0]
    fields = dict(re.findall(r'name="(policy|current)" value="([^"]*)"', form))
    return {name: unescape(value) for name, value in fields.items()}


def test_a_reviewer_enabling_the_candidate_files_a_policy_proposal(
    client, reviewer, other_reviewer, replay_memory
):
    memory, _ = replay_memory
    client.login(username="rita", password="pw-rita-123")
    url = f"/memories/{memory.slug}/replay/"
    form = _replayed_form(client, url, '{"quality_ranking": true}')
    assert form == {"policy": '{"quality_ranking": true}', "current": "{}"}
    r = client.post(f"{url}enable/", form, follow=True)
    proposal = Proposal.objects.get(kind="policy")
    assert r.redirect_chain == [(f"/review/proposals/{proposal.pk}/", 302)]
    assert f"Proposal #{proposal.pk} files the change (quality_ranking)" in r.content.decode()
    assert proposal.payload == {"policy": {"quality_ranking": True}, "before": {}}
    assert proposal.submitted_by_label == "rita"
    # Nothing changes until another reviewer approves.
    memory.refresh_from_db()
    assert memory.policy == {}
    assert not AuditEvent.objects.filter(action="memory.policy_changed").exists()
    # The same candidate again: the open proposal is named, nothing new is filed.
    again = client.post(f"{url}enable/", _replayed_form(client, url, '{"quality_ranking": true}'))
    assert again.status_code == 409
    assert f"Proposal {proposal.pk} (policy) is already open" in unescape(again.content.decode())
    assert Proposal.objects.filter(kind="policy").count() == 1
    ravi = Client()
    ravi.login(username="ravi", password="pw-ravi-123")
    done = ravi.post(f"/review/proposals/{proposal.pk}/approve/", {"revision": 1})
    assert done.status_code == 302, done.content
    memory.refresh_from_db()
    assert memory.policy == {"quality_ranking": True}
    event = AuditEvent.objects.filter(action="memory.policy_changed").get()
    assert event.payload == {"before": {}, "after": {"quality_ranking": True}}
    assert event.actor_label == "ravi" and event.proposal_id == proposal.pk


def test_enabling_after_someone_else_changed_the_policy_is_refused(
    client, reviewer, staff, replay_memory
):
    memory, _ = replay_memory
    client.login(username="rita", password="pw-rita-123")
    url = f"/memories/{memory.slug}/replay/"
    form = _replayed_form(client, url, '{"quality_ranking": true}')
    actions.update_memory_policy(memory, actor=staff, policy={"recall_events": True})
    r = client.post(f"{url}enable/", form)
    assert r.status_code == 409
    assert "changed since you looked at it; replay again" in r.content.decode()
    memory.refresh_from_db()
    assert memory.policy == {"recall_events": True}


@pytest.mark.parametrize(
    ("policy", "current", "status", "says"),
    [
        ('{"quality_ranking": "yes"}', "{}", 400, "quality_ranking"),
        ("[1, 2]", "{}", 400, "must be a JSON object"),
        ("{nope", "{}", 400, "not valid JSON"),
        ("{}", "{}", 400, "sets no key"),
        ('{"quality_ranking": true}', "", 400, "Replay the candidate before enabling it"),
    ],
)
def test_a_bad_candidate_is_refused_on_the_page_and_nothing_changes(
    client, reviewer, replay_memory, policy, current, status, says
):
    memory, _ = replay_memory
    client.login(username="rita", password="pw-rita-123")
    r = client.post(
        f"/memories/{memory.slug}/replay/enable/", {"policy": policy, "current": current}
    )
    assert r.status_code == status
    assert says in unescape(r.content.decode())
    memory.refresh_from_db()
    assert memory.policy == {}
    assert not AuditEvent.objects.filter(action="memory.policy_changed").exists()


def test_an_auditor_sees_the_report_without_the_button_and_cannot_enable(
    client, auditor, replay_memory
):
    memory, _ = replay_memory
    client.login(username="ada", password="pw-ada-123")
    url = f"/memories/{memory.slug}/replay/"
    html = client.get(url, {"run": "1", "queries": QUERY}).content.decode()
    assert "What would change" in html and 'data-testid="enable-policy"' not in html
    r = client.post(f"{url}enable/", {"policy": '{"quality_ranking": true}', "current": "{}"})
    assert r.status_code == 403
    memory.refresh_from_db()
    assert memory.policy == {}
    assert client.get(f"{url}enable/").status_code == 405
