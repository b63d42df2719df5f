"""The README's "Load a conversation and ask it", run as written against the demo that
``make demo`` loads: the agent key reaches ``acme-chat``, a Memory without admission review, so
the turns are recallable at once and the reply is found by the question it answers."""

from __future__ import annotations

import re

from .readme import demo_agent_key, python_block, run_block


def test_the_readme_conversation_runs_against_the_demo(live_server, transactional_db):
    key = demo_agent_key()
    code = python_block("acme-chat")
    expected = re.findall(r"^# (Caroline: .*)$", code, flags=re.M)
    assert '"http://127.0.0.1:8000/api/v1/memories/acme-chat"' in code
    printed = run_block(code, {"http://127.0.0.1:8000": live_server.url, "<agent key>": key})
    assert printed == expected == ["Caroline: 5 years already! chat-1 2026-03-14T18:00:00Z"]
