"""Browser routes of the memory core (mounted at the site root)."""

from lib.urls import under

from . import entry_browser, views, views_home, views_revalidation

urlpatterns = under(
    "memories/<slug:slug>/",
    ("", views_home.memory_home, "memory-home"),
    ("entries/", entry_browser.entry_list, "memory-entries"),
    ("revalidation/", views_revalidation.needs_rechecking, "memory-revalidation"),
    ("maintenance/", views_home.maintenance_runs, "memory-maintenance"),
    ("maintenance/<int:pk>/", views_home.maintenance_run, "memory-maintenance-run"),
    # A run handed to a worker, before and after it is recorded (the task id names it).
    (
        "maintenance/tasks/<slug:job>/<str:task_id>/",
        views_home.maintenance_task,
        "memory-maintenance-task",
    ),
    ("search/", views.search_playground, "memory-search-playground"),
)
