"""The splits API: status, transitions, the event log and the documents to run on.

Who may do what: managers make transitions; viewers, pipelines (and auditors) read the status; viewers
and pipelines read the documents to run on (text only, never gold); auditors and managers read the
events. A non-member gets 404, as for a project that does not exist.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.api.common import PAGE_PARAMETERS, paginated
from annotations.models import Project
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.pagination import KeysetPagination
from experiments.splits import (
    split_accept,
    split_assign_development,
    split_current_documents,
    split_events,
    split_move_to_validation,
    split_reject,
    split_run_for_project,
    split_status,
)


def _project_for_status_readers(user: AbstractBaseUser, slug: str) -> Project:
    """Working members from viewer up, and auditors: the status is part of the audit."""
    try:
        return project_get_for_user(user=user, slug=slug, required=Role.AUDITOR)
    except PermissionDenied:
        return project_get_for_user(user=user, slug=slug, required=Role.VIEWER)


class SplitStatusOutput(serializers.Serializer):
    strategy = serializers.CharField()
    phase = serializers.CharField(allow_null=True)
    chosen_config_hash = serializers.CharField(allow_null=True)
    current_stage = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    documents = serializers.IntegerField()


class SplitTransitionOutput(SplitStatusOutput):
    moved = serializers.ListField(
        child=serializers.CharField(), help_text="External ids of the documents moved."
    )


def _transition_response(project: Project, documents: list) -> Response:
    body = SplitStatusOutput(split_status(project=project)).data
    body["moved"] = [document.external_id for document in documents]
    return Response(body, status=status.HTTP_200_OK)


class SplitStatusApi(APIView):
    @extend_schema(operation_id="splits_status", responses=SplitStatusOutput)
    def get(self, request: Request, slug: str) -> Response:
        project = _project_for_status_readers(request.user, slug)
        return Response(SplitStatusOutput(split_status(project=project)).data)


class SplitAssignDevelopmentApi(APIView):
    class DevelopmentInputSerializer(serializers.Serializer):
        n = serializers.IntegerField(min_value=1, required=False)
        document_ids = serializers.ListField(
            child=serializers.CharField(max_length=255), allow_empty=False, required=False
        )
        seed = serializers.IntegerField(min_value=0, required=False)
        stratify_by = serializers.CharField(max_length=200, required=False)
        reason = serializers.CharField(required=False, allow_blank=True, default="")

        def validate(self, data: dict) -> dict:
            if ("n" in data) == ("document_ids" in data):
                raise serializers.ValidationError("Give either n (with a seed) or document_ids.")
            if "n" in data and "seed" not in data:
                raise serializers.ValidationError(
                    {"seed": "A random draw needs a seed, so it can be repeated."}
                )
            return data

    @extend_schema(
        operation_id="splits_assign_development",
        request=DevelopmentInputSerializer,
        responses=SplitTransitionOutput,
    )
    def post(self, request: Request, slug: str) -> Response:
        """Assign documents to development: `n` drawn with `seed` (optionally stratified), or `document_ids`.

        The draw sorts the unassigned documents by external id and takes the first n of
        numpy.random.default_rng(seed).permutation; stratified: proportional allocation by largest
        remainder, then the same draw inside each stratum. Same seed, same documents: same draw.
        """
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.DevelopmentInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        documents = split_assign_development(
            project=project, actor=request.user, request_id=request.request_id, **serializer.validated_data
        )
        return _transition_response(project, documents)


class SplitMoveToValidationApi(APIView):
    class ValidationInputSerializer(serializers.Serializer):
        n = serializers.IntegerField(min_value=1)
        seed = serializers.IntegerField(min_value=0)
        run = serializers.IntegerField(help_text="The development run whose configuration is validated.")
        stratify_by = serializers.CharField(max_length=200, required=False)
        reason = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="splits_move_to_validation",
        request=ValidationInputSerializer,
        responses=SplitTransitionOutput,
    )
    def post(self, request: Request, slug: str) -> Response:
        """Validate the configuration of a scored development run on `n` documents not yet assigned."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = self.ValidationInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        data["run"] = split_run_for_project(project=project, run_id=data["run"])
        documents = split_move_to_validation(
            project=project, actor=request.user, request_id=request.request_id, **data
        )
        return _transition_response(project, documents)


class SplitDecisionInput(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class SplitAcceptApi(APIView):
    @extend_schema(operation_id="splits_accept", request=SplitDecisionInput, responses=SplitTransitionOutput)
    def post(self, request: Request, slug: str) -> Response:
        """Accept: every unassigned document becomes a test document; splits are sealed; the project is finished."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = SplitDecisionInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        documents = split_accept(
            project=project, actor=request.user, request_id=request.request_id, **serializer.validated_data
        )
        return _transition_response(project, documents)


class SplitRejectApi(APIView):
    @extend_schema(operation_id="splits_reject", request=SplitDecisionInput, responses=SplitTransitionOutput)
    def post(self, request: Request, slug: str) -> Response:
        """Reject: validation documents return to development and the chosen configuration is cleared."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = SplitDecisionInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        documents = split_reject(
            project=project, actor=request.user, request_id=request.request_id, **serializer.validated_data
        )
        return _transition_response(project, documents)


class SplitEventListApi(APIView):
    class SplitEventOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        created_at = serializers.DateTimeField()
        action = serializers.CharField()
        document = serializers.CharField(source="document.external_id", default=None)
        from_split = serializers.CharField()
        to_split = serializers.CharField()
        phase = serializers.CharField()
        actor = serializers.CharField(source="actor.username", default=None)
        reason = serializers.CharField()
        seed = serializers.IntegerField(allow_null=True)
        request_id = serializers.CharField()
        run = serializers.IntegerField(source="run_id", allow_null=True)
        counts_after = serializers.DictField(child=serializers.IntegerField())

    @extend_schema(
        operation_id="splits_events",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter("document", str, description="Only this document's events (external id)."),
            OpenApiParameter("action", str, description="Only this action, e.g. access_refused."),
        ],
        responses=paginated(SplitEventOutputSerializer, "SplitEventPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        """Every split event of the project, oldest first. Auditors and managers."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.AUDITOR)
        events = split_events(
            project=project,
            document_external_id=request.query_params.get("document"),
            action=request.query_params.get("action"),
        )
        paginator = KeysetPagination()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(self.SplitEventOutputSerializer(page, many=True).data)


class SplitDocumentListApi(APIView):
    """The documents to run on now: id, external id, name and text. Never gold."""

    class SplitDocumentOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        external_id = serializers.CharField()
        name = serializers.CharField()
        text = serializers.CharField()

    @extend_schema(
        operation_id="splits_documents",
        parameters=[
            *PAGE_PARAMETERS,
            OpenApiParameter(
                "stage", str, description="current (default), development, validation, test or all."
            ),
        ],
        responses=paginated(SplitDocumentOutputSerializer, "SplitDocumentPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        documents = split_current_documents(
            project=project,
            stage=request.query_params.get("stage", "current"),
            user=request.user,
            request_id=request.request_id,
        )
        paginator = KeysetPagination()
        page = paginator.paginate_queryset(documents, request, view=self)
        return paginator.get_paginated_response(self.SplitDocumentOutputSerializer(page, many=True).data)
