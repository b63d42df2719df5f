"""Retake the README screenshots at 1280 and 390 px from the demo data.

Run the demo on a throwaway SQLite file (never ``db.sqlite3``) and point this at it::

    export DATABASE_URL=sqlite:////tmp/steward-shots.sqlite3
    rm -f /tmp/steward-shots.sqlite3
    .venv/bin/python manage.py migrate && .venv/bin/python manage.py load_demo
    .venv/bin/python manage.py runserver 127.0.0.1:8751 --noreload --insecure &
    .venv/bin/python docs/screenshots/take.py --base http://127.0.0.1:8751

(``--insecure`` serves the static files with ``DEBUG`` off.) It signs in as rita (dashboard,
inbox, the discussed consolidation #1 with its diff and thread, the Memory home), then as ravi
approves the demo's cleanup proposal so that an operation page exists (the only write it makes)
and shoots that operation. Each page is taken at 1280 px (``NAME.png``, the full page) and at
390 px (``NAME-phone.png``, the first screen); the script fails when a page is wider than its
viewport. Chromium: ``/usr/bin/chromium`` or ``$CHROMIUM_PATH``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "steward-demo"
SLUG = "acme-platform"
WIDTHS = {"": (1280, 900), "-phone": (390, 844)}


def login(page: Any, username: str) -> None:
    page.goto("/accounts/login/?next=/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")


def shoot(page: Any, out: Path, name: str, suffix: str, width: int) -> Path:
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)  # the vendored charts animate in
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide > width:
        raise SystemExit(f"{page.url} is {wide} px wide at {width} px")
    path = out / f"{name}{suffix}.png"
    page.screenshot(path=str(path), full_page=not suffix)
    return path


def operation_path(page: Any) -> str:
    """Approve the demo cleanup as ravi (once) and return its operation's page."""
    page.goto("/review/?status=all&kind=cleanup")
    page.locator("a[href^='/review/proposals/']").first.click()
    page.wait_for_url(re.compile(r"/review/proposals/\d+/"))
    decision = page.locator("#decision")
    if decision.get_by_role("button", name="Approve", exact=True).count():
        for box in decision.locator("input[name=acknowledge]").all():
            box.check()
        decision.get_by_role("button", name="Approve", exact=True).click()
    link = page.locator("#decision a[href^='/operations/']").first
    link.wait_for()
    href = link.get_attribute("href")
    if not href:
        raise SystemExit("no operation link after approving the demo cleanup")
    return href


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8751", help="the running demo")
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go")
    parser.add_argument("--proposal", type=int, default=1, help="the proposal to show")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = {
        "dashboard": "/",
        "inbox": "/review/",
        "proposal": f"/review/proposals/{args.proposal}/",
        "memory": f"/memories/{SLUG}/",
    }
    taken: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        op: str | None = None
        for suffix, (width, height) in WIDTHS.items():
            context = browser.new_context(
                base_url=args.base, viewport={"width": width, "height": height}
            )
            page = context.new_page()
            page.set_default_timeout(15_000)
            login(page, "rita")
            for name, path in pages.items():
                page.goto(path)
                if name == "inbox":
                    page.keyboard.press("j")  # show the selected row
                taken.append(shoot(page, args.out, name, suffix, width))
            context.close()
            context = browser.new_context(
                base_url=args.base, viewport={"width": width, "height": height}
            )
            page = context.new_page()
            page.set_default_timeout(15_000)
            login(page, "ravi")
            op = op or operation_path(page)
            page.goto(op)
            taken.append(shoot(page, args.out, "operation", suffix, width))
            context.close()
        browser.close()
    for png in taken:
        print(png.relative_to(Path.cwd()) if png.is_relative_to(Path.cwd()) else png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
