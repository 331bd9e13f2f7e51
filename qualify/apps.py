from django.apps import AppConfig


class QualifyConfig(AppConfig):
    name = "qualify"
    verbose_name = "Qualify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # memory never imports qualify: it learns about decisions through this registry.
        from memory import attribution, stored_texts
        from qualify.attribution import provider
        from qualify.stored_texts import provider as texts

        attribution.register(provider)
        # `karani secrets` screens qualify's stored texts too, through this registry.
        stored_texts.register(texts)
