"""Named saved inbox views: a user saves the inbox's filters, search and order under a name,
finds them listed on the inbox, opens and deletes them. Names are unique per user (409 on a
duplicate); auditors keep views too; nobody sees or touches another user's views."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from review.actions.saved_views import DuplicateViewName, save_view
from review.models import SavedView

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true", "HX-Target": "saved-views"}


def _user(name: str) -> User:
    return User.objects.get(username=name)


def test_saving_keeps_the_filters_search_and_order(rita, proposal):
    r = rita.post(
        "/review/views/",
        {"name": "Lossy, newest", "lost": "yes", "sort": "newest", "q": "deploy", "cursor": "x"},
    )
    assert r.status_code == 302, r.content
    view = SavedView.objects.get(user=_user("rita"))
    assert view.name == "Lossy, newest"
    assert view.params == {"lost": "yes", "sort": "newest", "q": "deploy"}


def test_saved_views_are_listed_on_the_inbox_and_open_it(rita, proposal):
    save_view(_user("rita"), name="Mine", params={"assigned": "me", "sort": "newest"})
    html = rita.get("/review/").content.decode()
    assert 'href="/review/?assigned=me&amp;sort=newest">Mine</a>' in html
    current = rita.get("/review/?assigned=me&sort=newest").content.decode()
    assert 'aria-current="true">Mine</a>' in current
    view = SavedView.objects.get(name="Mine")
    r = rita.get(f"/review/views/{view.pk}/")
    assert r.status_code == 302
    assert r["Location"] == "/review/?assigned=me&sort=newest"


def test_a_duplicate_name_is_a_conflict_with_htmx(rita, proposal):
    save_view(_user("rita"), name="Mine", params={})
    r = rita.post("/review/views/", {"name": "Mine", "kind": "cleanup"}, headers=HTMX)
    assert r.status_code == 409, r.content
    html = r.content.decode()
    assert 'id="saved-views"' in html
    assert "You already have a saved view with that name." in html
    assert SavedView.objects.get(name="Mine").params == {}


def test_a_duplicate_name_without_javascript_shows_the_form_again(rita, proposal):
    save_view(_user("rita"), name="Mine", params={})
    r = rita.post("/review/views/", {"name": "Mine"})
    assert r.status_code == 409, r.content
    assert "You already have a saved view with that name." in r.content.decode()


def test_a_blank_name_is_refused(rita, proposal):
    r = rita.post("/review/views/", {"name": "  "}, headers=HTMX)
    assert r.status_code == 422, r.content
    assert not SavedView.objects.exists()


def test_the_same_name_is_fine_for_two_users(rita, ravi, proposal):
    save_view(_user("rita"), name="Mine", params={})
    r = ravi.post("/review/views/", {"name": "Mine"}, headers=HTMX)
    assert r.status_code == 200, r.content
    assert SavedView.objects.filter(name="Mine").count() == 2


def test_the_constraint_refuses_a_duplicate_name(reviewer):
    save_view(_user("rita"), name="Mine", params={})
    with pytest.raises(DuplicateViewName):
        save_view(_user("rita"), name="Mine", params={"kind": "cleanup"})


def test_nobody_sees_or_opens_or_deletes_another_users_views(rita, ravi, proposal):
    mine = save_view(_user("rita"), name="Rita's secret view", params={"q": "x"})
    assert "Rita&#x27;s secret view" not in ravi.get("/review/").content.decode()
    assert ravi.get(f"/review/views/{mine.pk}/").status_code == 404
    assert ravi.post(f"/review/views/{mine.pk}/delete/").status_code == 404
    assert SavedView.objects.filter(pk=mine.pk).exists()


def test_deleting_a_view(rita, proposal):
    view = save_view(_user("rita"), name="Old", params={})
    r = rita.post(f"/review/views/{view.pk}/delete/", headers=HTMX)
    assert r.status_code == 200, r.content
    assert "Deleted saved view" in r.content.decode()
    assert not SavedView.objects.exists()


def test_auditors_may_keep_saved_views(ada, proposal):
    r = ada.post("/review/views/", {"name": "Audit trail", "status": "all"})
    assert r.status_code == 302, r.content
    assert 'href="/review/?status=all">Audit trail</a>' in ada.get("/review/").content.decode()


def test_people_without_a_review_role_cannot_save_views(nobody):
    r = nobody.post("/review/views/", {"name": "x"})
    assert r.status_code == 403
    assert not SavedView.objects.exists()


def test_saved_views_cost_one_query_whatever_their_number(
    rita, proposal, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as one:
        rita.get("/review/")
    for i in range(15):
        save_view(_user("rita"), name=f"view {i}", params={"q": str(i)})
    with django_assert_max_num_queries(len(one.captured_queries)):
        rita.get("/review/")
