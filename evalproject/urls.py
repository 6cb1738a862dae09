from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from evalproject.health import health

urlpatterns = [
    path("health/", health, name="health"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("annotations.urls")),
    path("api/v1/", include("experiments.urls")),
    path("api/v1/", include("metrics.urls")),
    path("api/v1/", include("webhooks.urls")),
    path("accounts/", include("web.account_urls")),
    path("", include("web.urls")),
]
