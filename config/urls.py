"""Root URL configuration."""

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView

from lib.health import healthz, readyz
from lib.password_reset import PasswordResetView
from lib.views import ApiDocsView, api_not_found
from review.dashboard import dashboard

api_v1: list[URLPattern | URLResolver] = [
    path("", include("memory.api.urls")),
    path("", include("exposure.urls")),
    path("", include("proposals.urls")),
    path("", include("audit.api_urls")),
    path("", include("review.engine_urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", ApiDocsView.as_view(url_name="schema"), name="api-docs"),
]

urlpatterns = [
    path("", dashboard, name="home"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    # Throttled: it mails people. The other account pages are Django's (the product's templates).
    path("accounts/password_reset/", PasswordResetView.as_view(), name="password_reset"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include(api_v1)),
    path("api/<path:rest>", api_not_found),
    path("api/", api_not_found),
    path("", include("agents.urls")),
    path("", include("audit.urls")),
    path("", include("review.history_urls")),
    path("", include("memory.web.urls")),
    path("", include("evaluation.urls")),
    path("", include("review.inbox_urls")),
    path("", include("review.entry_urls")),
    path("", include("review.notification_urls")),
]

handler404 = "lib.views.not_found"
handler500 = "lib.views.server_error"
