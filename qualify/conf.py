"""qualify's app settings, declared once (``memory.appsettings``): its own ``KARANI_*``
settings, and the LLM endpoint's, which memory declares since mem0's extraction reads them too.

Read as ``from qualify.conf import settings`` (``settings.KARANI_MEMORY_TOP_K``); a host project
sets only what it wants to change in its own settings module, as for memory's.
"""

from typing import Any

from django.core.checks import CheckMessage

from memory.appsettings import AppSettings, Setting, check, number, whole
from memory.conf import LLM

SETTINGS = (
    # Facts per working-context block; never more than 10 whatever is set (qualify.context).
    Setting("KARANI_MEMORY_TOP_K", 5, whole(1)),
    # Share (0-1) of each working-context block kept for the company's own facts; the rest is
    # for the candidate's unscoped facts, and a share one side leaves empty goes to the other.
    Setting("KARANI_CONTEXT_COMPANY_SHARE", 0.4, number(0, 1, "a fraction from 0 to 1 (e.g. 0.4)")),
    # Characters of the candidate's standing preferences each working context shows beside
    # the ranked block (qualify.standing); over it, the ones bearing most on the posting.
    Setting("KARANI_STANDING_BUDGET", 2000, whole(200)),
    # Share of postings (0-0.5) judged without memory (qualify.holdout); 0 turns it off.
    Setting("KARANI_MEMORY_HOLDOUT", 0.0, number(0, 0.5, "a fraction from 0 to 0.5 (e.g. 0.1)")),
)

settings = AppSettings(SETTINGS, LLM)


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """One error per qualify setting whose value qualify cannot use (``manage.py check``)."""
    return check(SETTINGS)
