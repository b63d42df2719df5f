"""The password reset form, throttled: each request may mail someone, so anyone could otherwise
make the server mail any address over and over.

:class:`PasswordResetView` is Django's, with the product's templates (``templates/registration/``)
and the ``password_reset`` rate (``lib.throttling.password_reset_wait``) per client address and per
submitted email address. Over either, the form comes back with a message saying how long to wait,
429 and ``Retry-After``, and no mail is sent. Whether an account has the address is never told:
the email bucket counts every address alike, and the "sent" page reads the same for all.

Mail links use ``STEWARD_PUBLIC_URL`` when it is set (as every other mail does), else the address
the request came to (one of ``ALLOWED_HOSTS``).

The mail is rendered in the request and handed to the ``password_reset.send_mail`` task (this
module is in ``CELERY_IMPORTS``, so a worker knows it): with a broker a worker talks to the mail
server, so the answer takes as long for an address that has an account as for one that has none
(and a slow mail server holds up no web worker). A mail that cannot be handed over or sent in the
request (no broker, the mail server down; or the broker down) is logged, as Django's own form does,
and the answer is the "sent" page all the same: an error page only for addresses that have an
account would tell which do.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import send_mail as send_one_mail
from django.http import HttpRequest, HttpResponse
from django.template import loader

from .lockout import in_words
from .throttling import password_reset_wait

log = logging.getLogger(__name__)


@shared_task(
    name="password_reset.send_mail", autoretry_for=(OSError,), max_retries=5, default_retry_delay=30
)
def send_reset_mail(subject: str, body: str, recipient: str) -> None:
    """Send one reset mail, rendered by the request that asked for it; a mail server that
    fails (``OSError``, which ``SMTPException`` is) is tried again."""
    send_one_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [recipient])


class QueuedPasswordResetForm(PasswordResetForm):
    """Django's form, with the mail queued rather than sent in the request."""

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        try:
            send_reset_mail.delay(subject, body, to_email)
        except Exception:  # the broker, or without one the mail server: same answer for all
            log.exception("Failed to send password reset email to %s", context["user"].pk)


class PasswordResetView(auth_views.PasswordResetView):
    form_class = QueuedPasswordResetForm

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = password_reset_wait(request, str(request.POST.get("email", "")))
        if not wait:
            return super().post(request, *args, **kwargs)
        context = self.get_context_data(form=self.get_form())
        context["throttled"] = in_words(wait)
        response = self.render_to_response(context, status=429)
        response["Retry-After"] = str(wait)
        return response

    def form_valid(self, form: Any) -> HttpResponse:
        self.extra_email_context = {"public_url": settings.STEWARD_PUBLIC_URL}
        return super().form_valid(form)
