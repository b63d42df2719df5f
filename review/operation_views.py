"""Browser pages of one maintenance operation: what an approval produced, what compensation would
restore, and the Compensate form.

Visibility is the operation selector's (``review.selectors.visible_operations``: Memory scope
and clearance, the same rule as ``GET /api/v1/operations/{id}``). Without JavaScript a
compensation redirects back with a message and a conflict renders the 409 page; with htmx the
compensation panel is swapped (409 and 422 included).
"""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe

from memory.actors import Actor

from . import actions, operation_page, web
from .exceptions import (
    AlreadyCompensated,
    CompensationConflict,
    Forbidden,
    NotFound,
    ValidationFailed,
)
from .forms import CompensateForm
from .models import MaintenanceOperation
from .permissions import may_decide
from .selectors import get_operation


class Shown(TypedDict, total=False):
    """What the page shows besides the operation, after a compensation attempt."""

    form: CompensateForm | None
    notice: str
    notice_kind: str
    moved: list[dict[str, Any]] | None


def _operation_context(
    actor: Actor,
    operation: MaintenanceOperation,
    *,
    form: CompensateForm | None = None,
    notice: str = "",
    notice_kind: str = "info",
    moved: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "nav": "review",
        "page": operation_page.operation_page(operation),
        "op": operation,
        "can_compensate": may_decide(actor) and not hasattr(operation, "compensation"),
        "is_reviewer": may_decide(actor),
        "errors": web.errors(form),
        "values": web.values(form),
        "notice": notice,
        "notice_kind": notice_kind,
        "conflict_moved": moved or [],
    }


@require_safe
@web.readers
def operation_detail(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    """``/operations/<id>/``: pre-state, produced records, derived-view impact, the compensation
    plan and what cannot be undone; the Compensate form for reviewers."""
    try:
        operation = get_operation(actor, pk)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    return render(request, "review/operation.html", _operation_context(actor, operation))


def _panel(
    request: HttpRequest, actor: Actor, pk: int, *, status: int, **shown: Unpack[Shown]
) -> HttpResponse:
    """The operation page (or, for htmx, its compensation panel) re-read after the attempt."""
    context = _operation_context(actor, get_operation(actor, pk), **shown)
    if web.is_htmx(request):
        # The panel, and out of band the header's status badge and the pre-state's "Now".
        context["fragment"] = True
        return render(request, "review/operation.html#compensation", context, status=status)
    return render(request, "review/operation.html", context, status=status)


def _conflict(
    request: HttpRequest, actor: Actor, pk: int, exc: CompensationConflict | AlreadyCompensated
) -> HttpResponse:
    moved = (exc.details or {}).get("moved") or []
    if web.is_htmx(request):
        return _panel(
            request, actor, pk, status=409, notice=exc.message, notice_kind="conflict", moved=moved
        )
    context = {
        "nav": "review",
        "message": exc.message,
        "code": "compensation_conflict",
        "moved": moved,
        "back": web.operation_url(pk),
        "operation_href": web.operation_url(pk),
        "compensation": getattr(get_operation(actor, pk), "compensation", None),
    }
    return render(request, "review/conflict.html", context, status=409)


def _invalid(request: HttpRequest, actor: Actor, pk: int, form: CompensateForm) -> HttpResponse:
    return _panel(
        request,
        actor,
        pk,
        status=422,
        form=form,
        notice="Please correct the form below.",
        notice_kind="error",
    )


@require_POST
@web.deciders
def operation_compensate(request: HttpRequest, actor: Actor, pk: int) -> HttpResponse:
    try:
        get_operation(actor, pk)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    form = CompensateForm(request.POST)
    if not form.is_valid():
        return _invalid(request, actor, pk, form)
    try:
        result = actions.compensate_operation(pk, actor=actor, comment=form.cleaned_data["comment"])
    except (CompensationConflict, AlreadyCompensated) as exc:
        return _conflict(request, actor, pk, exc)
    except NotFound as exc:
        return web.refuse(request, exc.message, status=404)
    except Forbidden as exc:
        return web.refuse(request, exc.message, status=403)
    except ValidationFailed as exc:
        for name, problems in (exc.details or {"__all__": [exc.message]}).items():
            for problem in problems if isinstance(problems, list) else [problems]:
                form.add_error(name if name in form.fields else None, str(problem))
        return _invalid(request, actor, pk, form)
    notice = (
        f"Operation #{pk} compensated: revision {result.revision.number} restored the prior heads."
    )
    if not web.is_htmx(request):
        messages.success(request, notice)
        return HttpResponseRedirect(web.operation_url(pk))
    return _panel(request, actor, pk, status=200, notice=notice, notice_kind="success")
