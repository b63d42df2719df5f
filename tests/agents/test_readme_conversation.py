"""The README's "Load a conversation and ask it", run as written against the demo that
``make demo`` loads: the agent key reaches ``acme-chat``, a Memory without admission review, so
the turns are recallable at once and the reply is found by the question it answers."""

from __future__ import annotations

import contextlib
import io
import re
from io import StringIO
from pathlib import Path

from django.core.management import call_command

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_conversation() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if "acme-chat" in b]
    return block


def test_the_readme_conversation_runs_against_the_demo(live_server, transactional_db):
    out = StringIO()
    call_command("load_demo", "--quiet", stdout=out)
    key = out.getvalue().strip()
    code = readme_conversation()
    expected = re.findall(r"^# (Caroline: .*)$", code, flags=re.M)
    assert '"http://127.0.0.1:8000/api/v1/memories/acme-chat"' in code
    code = code.replace("http://127.0.0.1:8000", live_server.url).replace("<agent key>", key)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    assert (
        printed.getvalue().splitlines()
        == expected
        == ["Caroline: 5 years already! chat-1 2026-03-14T18:00:00Z"]
    )
