"""``manage.py issue_api_key --name NAME --role agent|reviewer|auditor [--memory SLUG ...]``."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lib.errors import DomainError
from memory.keys import issue_api_key
from memory.models import ApiRole, Sensitivity


class Command(BaseCommand):
    help = "Issue an API key. The key is printed once; only its hash is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--role", required=True, choices=ApiRole.values)
        parser.add_argument("--memory", action="append", default=[], metavar="SLUG")
        parser.add_argument("--clearance", default=Sensitivity.INTERNAL, choices=Sensitivity.values)
        parser.add_argument("--owner", default=None, help="username of the accountable user")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            key, secret = issue_api_key(
                name=opts["name"],
                role=opts["role"],
                memory_slugs=opts["memory"],
                clearance=opts["clearance"],
                owner_username=opts["owner"],
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        scope = ", ".join(opts["memory"]) or "all memories"
        self.stderr.write(
            f"Issued {key.role} key '{key.name}' ({scope}, clearance {key.clearance})."
        )
        self.stdout.write(secret)
