from django.apps import AppConfig
from django.core import checks

from memory import modes
from memory.checks import check_schema_class, check_settings


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(check_settings)
        checks.register(check_schema_class)

        modes.warn_if_unavailable()
