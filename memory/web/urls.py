"""Browser routes of the memory core (mounted at the site root)."""

from lib.urls import under

from . import entries, home, playground, revalidation

urlpatterns = under(
    "memories/<slug:slug>/",
    ("", home.memory_home, "memory-home"),
    ("entries/", entries.entry_list, "memory-entries"),
    ("revalidation/", revalidation.needs_rechecking, "memory-revalidation"),
    ("maintenance/", home.maintenance_runs, "memory-maintenance"),
    ("maintenance/<int:pk>/", home.maintenance_run, "memory-maintenance-run"),
    # A run handed to a worker, before and after it is recorded (the task id names it).
    (
        "maintenance/tasks/<slug:job>/<str:task_id>/",
        home.maintenance_task,
        "memory-maintenance-task",
    ),
    ("search/", playground.search_playground, "memory-search-playground"),
)
