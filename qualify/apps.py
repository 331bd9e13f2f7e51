from django.apps import AppConfig


class QualifyConfig(AppConfig):
    name = "qualify"
    verbose_name = "Qualify"
    default_auto_field = "django.db.models.BigAutoField"
