"""Browser routes of the evaluation app (mounted at the site root)."""

from django.urls import path

from . import views

urlpatterns = [
    path("memories/<slug:slug>/replay/", views.replay_page, name="memory-replay"),
    path("memories/<slug:slug>/replay/enable/", views.enable_policy, name="memory-policy-enable"),
]
