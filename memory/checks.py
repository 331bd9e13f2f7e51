"""System checks (``manage.py check``): the ``KARANI_*`` values a project sets, and the API
schema's class.

karani_site parses its environment and refuses bad values at start-up; a host project writes
them straight into its settings module, so this check refuses them instead, one line each.
"""

from typing import Any

from django.apps import AppConfig, apps
from django.core.checks import CheckMessage, Warning
from django.utils.module_loading import import_string

from memory import appsettings, conf


def check_settings(app_configs: list[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """One error per memory setting whose value memory cannot use (``memory.conf``)."""
    return appsettings.check(conf.SETTINGS)


def check_schema_class(
    app_configs: list[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """The API's schema view (with drf_spectacular installed) needs drf-spectacular's class."""
    if not apps.is_installed("drf_spectacular"):
        return []
    # drf_spectacular is an app the host may leave out: imported only when it is installed.
    from drf_spectacular.openapi import AutoSchema
    from rest_framework.settings import api_settings

    configured = api_settings.DEFAULT_SCHEMA_CLASS
    if isinstance(configured, str):
        configured = import_string(configured)
    if isinstance(configured, type) and issubclass(configured, AutoSchema):
        return []
    return [
        Warning(
            "karani's API schema needs REST_FRAMEWORK['DEFAULT_SCHEMA_CLASS'] = "
            "'drf_spectacular.openapi.AutoSchema' (or drf_spectacular out of INSTALLED_APPS)",
            id="karani.W001",
        )
    ]
