"""The maintenance job registry: every job an app offers, read by everything that lists, checks,
runs or schedules jobs.

An app declares each of its jobs as a :class:`Job` (its name, the action that runs it, its Celery
task, what it does, the settings its ``policy.jobs.<name>`` section may carry) and registers it
in its ``AppConfig.ready()`` (:func:`register_job`): ``memory`` registers ``l1``, ``rebuild`` and
``revalidation``, ``proposals`` its passes. The policy's ``jobs`` section is validated against
the registry (:func:`check_jobs_policy`), and ``memory.maintenance`` (running one, the beat
fan-out), ``memory.tasks``, the maintenance page and the API read it. Apps are ready before any
request, command or migration runs, so the registry is complete wherever a policy is checked.

A leaf: it imports nothing of the project's but the ground (the error envelope and wording of
``lib``), so the lowest modules may read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from lib.errors import ValidationFailed
from lib.wording import listed

#: A job's beat schedule, when its section does not say (``every_hours``).
DEFAULT_EVERY_HOURS = 24

INVALID_SETTING = "Not a valid setting for this job."


class Setting(Protocol):
    """The shape of one setting of a job's policy section."""

    def check(self, value: object, field: str) -> None:
        """Raise :class:`~lib.errors.ValidationFailed` (400 ``invalid``) naming ``field`` when
        ``value`` does not fit."""


def _invalid(field: str) -> ValidationFailed:
    return ValidationFailed(details={field: [INVALID_SETTING]})


@dataclass(frozen=True)
class Number:
    """A number from ``low`` to ``high`` (true and false are no numbers)."""

    low: float
    high: float

    def accepts(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return self.low <= value <= self.high

    def check(self, value: object, field: str) -> None:
        if not self.accepts(value):
            raise _invalid(field)


@dataclass(frozen=True)
class OneOf:
    """One of the given strings."""

    values: tuple[str, ...]

    def check(self, value: object, field: str) -> None:
        if value not in self.values:
            raise _invalid(field)


@dataclass(frozen=True)
class Flag:
    """True or false."""

    def check(self, value: object, field: str) -> None:
        if not isinstance(value, bool):
            raise _invalid(field)


#: The settings every job takes: whether the beat schedule runs it, and how often.
SCHEDULE: Mapping[str, Setting] = {
    "enabled": Flag(),
    "every_hours": Number(0.01, 24 * 365),
}


@dataclass(frozen=True)
class Job:
    """One maintenance job.

    ``runner(memory, *, actor, dry_run)`` is its action (it records and returns its
    ``MaintenanceRun``); ``task`` names the Celery task that calls it (``memory.tasks.job_task``
    makes it). ``settings`` are what its ``policy.jobs.<name>`` section may carry besides the
    :data:`SCHEDULE`.
    """

    name: str
    runner: Callable[..., object]
    task: str
    #: What the job does, in a sentence (the maintenance page's job list).
    description: str = ""
    settings: Mapping[str, Setting] = field(default_factory=dict)
    #: A real run needs the job enabled in the Memory's policy (otherwise only the beat schedule
    #: needs it): on for a job that changes entries by itself.
    gated: bool = True
    #: A top-level policy switch that enables the job too (``l1_enabled`` for ``l1``).
    enabled_by: str = ""
    #: Queued (a real run as the system actor) when a session ends, if its policy enables it.
    after_session_end: bool = False
    #: Its real runs file proposals for a reviewer (the maintenance page offers these first).
    files_proposals: bool = False
    #: Lists show jobs by ``order``, then in the order they were registered.
    order: int = 0
    #: Named in the summary of ``POST …/maintenance/{job}`` in the OpenAPI document.
    in_api_summary: bool = True


_JOBS: dict[str, Job] = {}


def register_job(job: Job) -> None:
    """Make ``job`` available (from an ``AppConfig.ready()``); registering a name again
    replaces its job."""
    _JOBS[job.name] = job


def unregister_job(name: str) -> None:
    """Take a job away again (tests that register one of their own)."""
    _JOBS.pop(name, None)


def jobs() -> dict[str, Job]:
    """The registered jobs by name, in list order (:attr:`Job.order`, then registration)."""
    ordered = sorted(_JOBS.values(), key=lambda job: job.order)
    return {job.name: job for job in ordered}


def job_names() -> list[str]:
    return list(jobs())


def get_job(name: str) -> Job | None:
    return _JOBS.get(name)


def job_policy(policy: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``policy.jobs[name]`` (``{enabled, every_hours, …}``); every job is off unless
    enabled."""
    section = policy.get("jobs")
    raw = section.get(name) if isinstance(section, dict) else None
    return raw if isinstance(raw, dict) else {}


def job_enabled(policy: Mapping[str, Any], name: str) -> bool:
    """Whether ``policy`` enables the job: ``jobs.<name>.enabled``, or its top-level switch."""
    job = _JOBS.get(name)
    if job is not None and job.enabled_by and policy.get(job.enabled_by, False):
        return True
    return bool(job_policy(policy, name).get("enabled", False))


def check_jobs_policy(section: object) -> None:
    """A policy's ``jobs``: ``{job: {enabled?, every_hours?, …its settings}}`` for registered
    jobs; 400 ``invalid`` naming the first thing that is not.

    A job's section may also carry a setting that only other jobs read (policies always could;
    it is ignored there): it must then be valid for every job that reads it.
    """
    if section is None:
        return
    if not isinstance(section, dict):
        raise ValidationFailed(details={"policy.jobs": ["Must be an object."]})
    known = jobs()
    for name, cfg in section.items():
        field = f"policy.jobs.{name}"
        job = known.get(name)
        if job is None:
            raise ValidationFailed(details={field: [f"Unknown job; one of {listed(known)}."]})
        if not isinstance(cfg, dict):
            raise ValidationFailed(details={field: ["Must be an object."]})
        for key, value in cfg.items():
            _check_setting(job, key, value, f"{field}.{key}")


def _check_setting(job: Job, key: str, value: object, field: str) -> None:
    own = job.settings.get(key) or SCHEDULE.get(key)
    if own is not None:
        own.check(value, field)
        return
    shapes = [other.settings[key] for other in _JOBS.values() if key in other.settings]
    if not shapes:
        raise _invalid(field)
    if all(shape == shapes[0] for shape in shapes):
        shapes[0].check(value, field)
        return
    for shape in shapes:
        try:
            shape.check(value, field)
        except ValidationFailed:
            raise _invalid(field) from None
