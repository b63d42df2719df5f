"""Browser routes of the memory core (mounted at the site root)."""

from django.urls import path

from . import entry_browser, views, views_home

urlpatterns = [
    path("memories/<slug:slug>/", views_home.memory_home, name="memory-home"),
    path("memories/<slug:slug>/entries/", entry_browser.entry_list, name="memory-entries"),
    path(
        "memories/<slug:slug>/maintenance/",
        views_home.maintenance_runs,
        name="memory-maintenance",
    ),
    path(
        "memories/<slug:slug>/maintenance/<int:pk>/",
        views_home.maintenance_run,
        name="memory-maintenance-run",
    ),
    path("memories/<slug:slug>/search/", views.search_playground, name="memory-search-playground"),
]
