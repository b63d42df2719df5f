"""The admin offers the product's API keys only."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client


def test_the_admin_lists_only_the_keys_requests_authenticate_with(db):
    staff = User.objects.create_superuser("ops", "ops@example.com", "x")
    client = Client()
    client.force_login(staff)
    index = client.get("/admin/").content.decode()
    assert "/admin/memory/apikey/" in index
    assert "/admin/rest_framework_api_key/" not in index
    assert client.get("/admin/memory/apikey/").status_code == 200
    assert client.get("/admin/rest_framework_api_key/apikey/add/").status_code == 404
