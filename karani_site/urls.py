from django.contrib import admin
from django.urls import include, path

from karani_site import views
from memory.admin import login as admin_login

urlpatterns = [
    path("", views.home, name="home"),
    # Before admin.site.urls, so this throttled view answers the admin's own login URL.
    path("admin/login/", admin_login.login),
    path("admin/", admin.site.urls),
    path("api/", include("memory.api.urls")),
    path("api/", include("qualify.api.urls")),
]

# karani's own admin branding: the apps leave a host project's admin as the host set it.
admin.site.site_header = "karani administration"
admin.site.site_title = "karani admin"
admin.site.index_title = "The memory ledger"
# The app list beside every page takes a fifth of a laptop screen from the memories list.
admin.site.enable_nav_sidebar = False

# Errors raised before a view (a bad Host header, a failing middleware) and any other path
# under /api/: JSON there, Django's own pages everywhere else.
handler400 = "memory.api.exceptions.bad_request"
handler404 = "memory.api.exceptions.page_not_found"
handler500 = "memory.api.exceptions.server_error"
