from django.apps import AppConfig

from memory import modes


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        modes.warn_if_unavailable()
