"""The memories list's newer/older pager: the list never counts the ledger."""

from typing import Any

from django import template
from django.contrib.admin.views.main import PAGE_VAR, ChangeList

register = template.Library()


@register.inclusion_tag("admin/memory/memory/pager.html")
def memory_pager(cl: ChangeList) -> dict[str, Any]:
    # A page that is not full is the last one.
    page = cl.page_num
    full = len(cl.result_list) >= cl.list_per_page
    return {
        "page": page,
        "previous_link": cl.get_query_string({PAGE_VAR: page - 1}) if page > 1 else None,
        "next_link": cl.get_query_string({PAGE_VAR: page + 1}) if full else None,
    }
