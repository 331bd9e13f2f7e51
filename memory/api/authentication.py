"""Token authentication with one hand-written query: DRF's answers, a third of its CPU.

DRF's TokenAuthentication runs ``Token.objects.select_related("user").get(key=key)`` on every
API request. Building, cloning and compiling that queryset costs ~0.25 ms of CPU each time,
more than the indexed lookup itself (measured in process: 0.45 ms for DRF's lookup, 0.20 ms
for the same join as a raw query). The API's whole budget over recall is 3 ms at p95, so
the lookup is written once here, from the models' own metadata, and Django still builds the
user (its field converters included, so SQLite and PostgreSQL rows come out alike).

Same rules as DRF: an unknown key is "Invalid token.", an inactive user is "User inactive or
deleted.", both 401; ``request.auth`` is the Token, ``request.user`` the user. Every request
still reads the token table: a deleted or rotated token stops working at once.
"""

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connections
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

_KEY = "karani_token_key"
_CREATED = "karani_token_created"


@cache
def _lookup_sql(alias: str) -> str:
    """The join, for the database alias the user manager reads from."""
    user = get_user_model()._meta
    token = Token._meta
    qn = connections[alias].ops.quote_name
    u, t = qn(user.db_table), qn(token.db_table)
    user_columns = ", ".join(f"{u}.{qn(f.column)}" for f in user.concrete_fields)
    return (
        f"SELECT {user_columns}, {t}.{qn(token.get_field('key').column)} AS {_KEY}, "
        f"{t}.{qn(token.get_field('created').column)} AS {_CREATED} "
        f"FROM {t} INNER JOIN {u} ON {u}.{qn(user.pk.column)} = "
        f"{t}.{qn(token.get_field('user').column)} "
        f"WHERE {t}.{qn(token.get_field('key').column)} = %s"
    )


def _from_db(value: Any, alias: str) -> Any:
    """Token.created as the ORM would load it (SQLite returns a string)."""
    column = Token._meta.get_field("created").get_col(Token._meta.db_table)
    connection = connections[alias]
    for convert in connection.ops.get_db_converters(column) + column.get_db_converters(connection):
        value = convert(value, column, connection)
    return value


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token KEY``; a drop-in for DRF's class (and its OpenAPI scheme)."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        users = get_user_model()._default_manager
        alias = users.db
        found = list(users.raw(_lookup_sql(alias), [key]))
        if not found:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = found[0]
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        # The token's columns rode along on the user row; they belong to the Token only.
        key, created = user.__dict__.pop(_KEY), user.__dict__.pop(_CREATED)
        token = Token(key=key, user=user, created=_from_db(created, alias))
        token._state.adding = False
        token._state.db = alias
        return user, token
