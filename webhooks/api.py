"""A project's webhooks: managers list, register (the secret is shown once), remove and ping them, and
read every delivery attempt. Other members get 403, non-members 404."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated, paginated_response
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.api import ApiView
from webhooks.selectors import delivery_list, webhook_get, webhook_list
from webhooks.services import webhook_create, webhook_delete, webhook_ping


class WebhookOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    description = serializers.CharField()
    is_active = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class WebhookCreatedOutputSerializer(WebhookOutputSerializer):
    secret = serializers.CharField(
        help_text="The signing secret. Shown in this answer only: store it where the receiver can read it."
    )


class DeliveryOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField(help_text="job.succeeded, job.failed or ping.")
    event_id = serializers.CharField(
        help_text="Shared by the attempts of one event (X-Evalproject-Delivery)."
    )
    job = serializers.IntegerField(source="job_id", allow_null=True)
    attempt = serializers.IntegerField(help_text="1 for the first attempt.")
    payload = serializers.JSONField(help_text="The JSON body sent.")
    status_code = serializers.IntegerField(allow_null=True, help_text="Null when no answer came.")
    error = serializers.CharField(help_text="Empty when the receiver answered 2xx.")
    duration_ms = serializers.IntegerField()
    succeeded = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class WebhookListCreateApi(ApiView):
    paginated_methods = ("get",)

    class WebhookCreateInputSerializer(serializers.Serializer):
        url = serializers.URLField(
            max_length=500, help_text="An http or https URL; redirects are not followed."
        )
        description = serializers.CharField(
            max_length=200,
            required=False,
            allow_blank=True,
            default="",
            help_text="What the receiver is, for people (e.g. CI).",
        )

    @extend_schema(
        operation_id="webhooks_list",
        responses=paginated(WebhookOutputSerializer, "WebhookPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        """The project's webhooks (without their secrets). Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        return paginated_response(
            queryset=webhook_list(project=project),
            serializer_class=WebhookOutputSerializer,
            request=request,
            view=self,
        )

    @extend_schema(
        operation_id="webhooks_create",
        request=WebhookCreateInputSerializer,
        responses={201: WebhookCreatedOutputSerializer},
        examples=[
            OpenApiExample(
                "A CI receiver",
                value={"url": "https://ci.example.org/hooks/evalproject", "description": "CI"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        """Register a URL called when an import or scoring job of the project ends. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.WebhookCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = webhook_create(project=project, user=request.user, **serializer.validated_data)
        return Response(WebhookCreatedOutputSerializer(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(ApiView):
    @extend_schema(operation_id="webhooks_retrieve", responses=WebhookOutputSerializer)
    def get(self, request: Request, slug: str, webhook_id: int) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        return Response(WebhookOutputSerializer(webhook_get(project=project, webhook_id=webhook_id)).data)

    @extend_schema(operation_id="webhooks_destroy", responses={204: None})
    def delete(self, request: Request, slug: str, webhook_id: int) -> Response:
        """Remove the webhook and its delivery log. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        webhook_delete(webhook=webhook_get(project=project, webhook_id=webhook_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookPingApi(ApiView):
    @extend_schema(
        operation_id="webhooks_ping",
        request=None,
        responses={
            202: inline_serializer(
                name="WebhookPingQueued",
                fields={
                    "event_id": serializers.CharField(),
                    "deliveries_url": serializers.CharField(help_text="Where its attempts are listed."),
                },
            )
        },
    )
    def post(self, request: Request, slug: str, webhook_id: int) -> Response:
        """Send a `ping` event to the webhook (delivered and retried like any event). Takes no body.
        Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        webhook = webhook_get(project=project, webhook_id=webhook_id)
        event_id = webhook_ping(webhook=webhook)
        deliveries = f"/api/v1/projects/{project.slug}/webhooks/{webhook.pk}/deliveries/"
        return Response({"event_id": event_id, "deliveries_url": deliveries}, status=status.HTTP_202_ACCEPTED)


class WebhookDeliveryListApi(ApiView):
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="webhook_deliveries_list",
        responses=paginated(DeliveryOutputSerializer, "WebhookDeliveryPage"),
    )
    def get(self, request: Request, slug: str, webhook_id: int) -> Response:
        """Every delivery attempt of the webhook, newest first. Managers only."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        webhook = webhook_get(project=project, webhook_id=webhook_id)
        return paginated_response(
            queryset=delivery_list(webhook=webhook),
            serializer_class=DeliveryOutputSerializer,
            request=request,
            view=self,
            ordering="-id",
        )
