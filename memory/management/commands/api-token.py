from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from rest_framework.authtoken.models import Token

from memory.api.permissions import WRITE_PERMISSIONS, WRITERS_GROUP
from memory.management.base import KaraniCommand


def writers_group() -> Group:
    """The group whose members may write through the API, with its model permissions."""
    group, _ = Group.objects.get_or_create(name=WRITERS_GROUP)
    codenames = [p.split(".", 1)[1] for p in WRITE_PERMISSIONS]
    perms = Permission.objects.filter(content_type__app_label="memory", codename__in=codenames)
    group.permissions.add(*perms)
    return group


class Command(KaraniCommand):
    help = (
        "Print the REST API token of a user (created on first use). "
        f"--writer adds the user to the {WRITERS_GROUP!r} group, which may write."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the user whose token to print, create or rotate")
        parser.add_argument(
            "--create-user", action="store_true", help="create the user (no password) if missing"
        )
        parser.add_argument("--writer", action="store_true", help="allow writes through the API")
        parser.add_argument(
            "--rotate", action="store_true", help="replace the user's token with a new one"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        User = get_user_model()
        with transaction.atomic():
            try:
                user = User.objects.get_by_natural_key(opts["username"])
            except User.DoesNotExist:
                if not opts["create_user"]:
                    raise CommandError(
                        f"no user {opts['username']!r}; add --create-user to create one"
                    ) from None
                user = User.objects.create_user(username=opts["username"])
            if not user.is_active:
                raise CommandError(f"user {user.get_username()!r} is inactive")
            if opts["writer"]:
                user.groups.add(writers_group())
            if opts["rotate"]:
                Token.objects.filter(user=user).delete()
            token, _ = Token.objects.get_or_create(user=user)
        # The key alone on stdout, so `TOKEN=$(karani api-token me)` works.
        self.stdout.write(token.key)
