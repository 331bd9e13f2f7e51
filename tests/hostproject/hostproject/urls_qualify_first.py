from hostproject.urls import handler404  # noqa: F401  (Django reads handler404 here)
from hostproject.urls import urlpatterns as memory_first

# The same patterns as hostproject.urls with karani's two includes in the other order.
home, admin, memory_api, qualify_api, *rest = memory_first
urlpatterns = [home, admin, qualify_api, memory_api, *rest]
