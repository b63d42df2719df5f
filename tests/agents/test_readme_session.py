"""The README's MCP session, run as written against the demo Memory that ``make demo`` loads.

A new user copies that block first; it must work on the demo as it is (admission review on for
uncited writes), not only on a test Memory.
"""

from __future__ import annotations

from .readme import demo_agent_key, python_block, run_block


def test_the_readme_mcp_session_runs_against_the_demo(live_server, transactional_db):
    key = demo_agent_key()
    code = python_block("streamable_http_client")
    assert '"http://127.0.0.1:8000/mcp"' in code and '"<agent key>"' in code
    printed = run_block(
        code, {"http://127.0.0.1:8000/mcp": f"{live_server.url}/mcp", "<agent key>": key}
    )
    assert printed == [
        "2 The staging freeze starts every Thursday at 16:00 UTC.",
        "['replaced', 'active']",
    ]
