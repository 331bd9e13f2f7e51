from django.apps import AppConfig
from django.core import checks

from qualify.checks import check_sqlite_transactions
from qualify.conf import check_settings


class QualifyConfig(AppConfig):
    name = "qualify"
    verbose_name = "Qualify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(check_settings)
        checks.register(check_sqlite_transactions)
        # memory never imports qualify: it learns about decisions through this registry.
        from memory import attribution, mcp_registry, stored_texts
        from qualify.fact_uses import provider
        from qualify.screened_texts import provider as texts

        attribution.register(provider)
        # By name: only `karani mcp` imports the tools (and the MCP SDK with them).
        mcp_registry.register("qualify.mcp_tools.add_tools")
        # `karani secrets` screens qualify's stored texts too, through this registry.
        stored_texts.register(texts)
