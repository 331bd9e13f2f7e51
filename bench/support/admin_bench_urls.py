"""URLs for bench/admin_bench.py: karani's admin beside a stock ModelAdmin of the same table.

The stock one is what ``admin.site.register(Memory)`` with the obvious options gives: a full
COUNT per page, a DISTINCT company list filter, Django's DISTINCT-dates hierarchy, and the
status column computed per row.
"""

from django.contrib import admin
from django.urls import path

from memory.models import Memory


class StockMemoryAdmin(admin.ModelAdmin):
    list_display = (
        "text",
        "kind",
        "company",
        "source",
        "fit_score",
        "created_at",
        "last_seen_at",
        "seen_count",
        "status",
    )
    list_filter = (("deleted_at", admin.EmptyFieldListFilter), "kind", "company", "source")
    search_fields = ("text",)
    date_hierarchy = "created_at"
    list_per_page = 50


baseline = admin.AdminSite(name="baseline")
baseline.register(Memory, StockMemoryAdmin)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("baseline/", baseline.urls),
]
