"""Every page names its icon, and the icon is a static file the site serves (browsers otherwise
ask for /favicon.ico, a 404 on every first visit)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders


@pytest.mark.django_db
def test_pages_name_an_icon_that_exists(client):
    html = client.get("/accounts/login/").content.decode()
    match = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', html)
    assert match, "the base template names no icon"
    path = match.group(1).split("/static/", 1)[1]
    found = finders.find(path)
    assert found and Path(str(found)).read_text().startswith("<svg")
