from django.contrib import admin
from django.urls import include, path

from karani_site import views
from memory.admin import login as admin_login

urlpatterns = [
    path("", views.home, name="home"),
    # Before admin.site.urls, so this throttled view answers the admin's own login URL.
    path("admin/login/", admin_login.login),
    path("admin/", admin.site.urls),
    # qualify's first: memory.api's URLs end with the API's catch-all 404.
    path("api/", include("qualify.api.urls")),
    path("api/", include("memory.api.urls")),
]

# Errors raised before a view (a bad Host header, a failing middleware): JSON under /api/.
handler400 = "memory.api.exceptions.bad_request"
handler500 = "memory.api.exceptions.server_error"
