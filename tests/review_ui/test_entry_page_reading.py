"""The entry page reads top down: the entry's current text and state come before the reviewer's
Quarantine / Pin / Forget forms, and a revision's attribute changes read as words
("pinned: yes · pin category: durable decision"), never as a stored dict."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from memory import actions
from tests.factories import remember

pytestmark = pytest.mark.django_db


def html_of(client: Client, uid: str) -> str:
    r = client.get(f"/memories/acme/entries/{uid}/")
    assert r.status_code == 200, r.content[:500]
    return r.content.decode()


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def section(html: str, id_: str) -> str:
    """The text of the section with id ``id_``."""
    start = html.rindex("<section", 0, html.index(f'id="{id_}"'))
    return text_of(html[start:].split("</section>")[0])


def pin(memory: Any, reviewer: Any, uid: str) -> int:
    """Pin ``uid`` as a durable decision; the pin revision's number."""
    result = actions.pin_entry(
        memory,
        actor=reviewer.actor,
        entry_uid=uid,
        pinned=True,
        category="durable_decision",
        reason="Legal asked",
    )
    assert result.revision is not None
    return result.revision.number


def test_the_current_text_and_state_come_before_the_action_forms(memory, agent, rita):
    uid = remember(memory, agent.actor, "Deploys run at 02:00 UTC via deploy.sh").entry.uid
    html = html_of(rita, uid)
    main = html[html.index('<main id="main">') :]
    current = main.index('id="current"')
    assert main.index("Deploys run at 02:00 UTC via deploy.sh") > current
    for form in ('id="govern"', 'id="reviewer-actions"'):
        assert current < main.index(form)
    card = section(main, "current")
    assert card.startswith("Current text active Version 1")
    assert card.endswith("Deploys run at 02:00 UTC via deploy.sh")


def test_the_current_text_is_shown_to_a_reader_without_forms(memory, agent, ada):
    uid = remember(memory, agent.actor, "Use the staging bucket for tests").entry.uid
    html = html_of(ada, uid)
    assert 'id="govern"' not in html
    card = section(html, "current")
    assert card.endswith("Use the staging bucket for tests")


def test_a_pin_revision_names_its_attributes_in_words(memory, agent, reviewer, rita):
    uid = remember(memory, agent.actor, "Keep the audit log for seven years").entry.uid
    pin(memory, reviewer, uid)
    html = html_of(rita, uid)
    revisions = section(html, "revisions")
    assert "(pinned: yes · pin category: durable decision)" in revisions
    assert "{" not in revisions and "'pinned'" not in html and "True" not in revisions


def test_the_revision_page_names_a_pins_settings_in_words(memory, agent, reviewer, rita):
    uid = remember(memory, agent.actor, "Keep the audit log for seven years").entry.uid
    number = pin(memory, reviewer, uid)
    r = rita.get(f"/memories/acme/revisions/{number}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "Settings: pinned: yes · pin category: durable decision" in text_of(html)
    assert "'pinned'" not in html
