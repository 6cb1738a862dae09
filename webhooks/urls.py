"""API routes of the webhooks app, mounted under /api/v1/."""

from django.urls import path

from webhooks.api import WebhookDeliveryListApi, WebhookDetailApi, WebhookListCreateApi, WebhookPingApi

urlpatterns = [
    path("projects/<slug:slug>/webhooks/", WebhookListCreateApi.as_view(), name="webhook-list"),
    path(
        "projects/<slug:slug>/webhooks/<int:webhook_id>/", WebhookDetailApi.as_view(), name="webhook-detail"
    ),
    path(
        "projects/<slug:slug>/webhooks/<int:webhook_id>/ping/", WebhookPingApi.as_view(), name="webhook-ping"
    ),
    path(
        "projects/<slug:slug>/webhooks/<int:webhook_id>/deliveries/",
        WebhookDeliveryListApi.as_view(),
        name="webhook-deliveries",
    ),
]
