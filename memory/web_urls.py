"""Browser routes of the memory core (mounted at the site root)."""

from django.urls import path

from . import views

urlpatterns = [
    path("memories/<slug:slug>/search/", views.search_playground, name="memory-search-playground"),
]
