"""The README's MCP session, run as written against the demo Memory that ``make demo`` loads.

A new user copies that block first; it must work on the demo as it is (admission review on for
uncited writes), not only on a test Memory.
"""

from __future__ import annotations

import contextlib
import io
import re
from io import StringIO
from pathlib import Path

from django.core.management import call_command

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_session() -> str:
    """The README's Python block that opens an MCP session."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (session,) = [b for b in blocks if "streamable_http_client" in b]
    return session


def test_the_readme_mcp_session_runs_against_the_demo(live_server, transactional_db):
    out = StringIO()
    call_command("load_demo", "--quiet", stdout=out)
    key = out.getvalue().strip()
    code = readme_session()
    assert '"http://127.0.0.1:8000/mcp"' in code and '"<agent key>"' in code
    code = code.replace("http://127.0.0.1:8000/mcp", f"{live_server.url}/mcp")
    code = code.replace("<agent key>", key)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    assert printed.getvalue().splitlines() == [
        "2 The staging freeze starts every Thursday at 16:00 UTC.",
        "['replaced', 'active']",
    ]
