"""The sections of ``manage.py evaluate``, one module each; importing registers them."""

from . import no_regression  # noqa: F401
