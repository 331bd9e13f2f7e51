from django.apps import AppConfig


class QualifyConfig(AppConfig):
    name = "qualify"
    verbose_name = "Qualify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # memory never imports qualify: it learns about decisions through this registry.
        from memory import attribution
        from qualify.attribution import provider

        attribution.register(provider)
