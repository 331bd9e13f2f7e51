"""The memories list never counts the ledger: a fixed count and a short page range.

As healthchecks does for its pings: Django's admin asks its paginator for ``count`` on
every page load, and a COUNT(*) over a million rows is a full scan per click. The list is
paged with previous/next links instead, and a page past the end is simply empty.
"""

from django.core.paginator import Paginator


class LedgerPaginator(Paginator):
    # Enough pages to browse back through; older facts are reached by filter, search or date.
    count = 10_000
    page_range = range(1, 10)
