"""The splits API: status, transitions, the event log and the documents to run on.

Who may do what: managers make transitions; viewers, pipelines (and auditors) read the status; viewers
and pipelines read the documents to run on (text only, never gold); auditors and managers read the
events. A non-member gets 404, as for a project that does not exist.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated
from annotations.models import Project
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.api import ApiView
from evalproject.pagination import KeysetPagination
from evalproject.validation import BIGINTEGER_MAX, INTEGER_MAX, ChoiceField
from experiments.models import RunStage
from experiments.splits import (
    SplitAction,
    split_accept,
    split_assign_development,
    split_current_documents,
    split_events,
    split_move_to_validation,
    split_reject,
    split_run_for_project,
    split_status,
)

SPLIT_ACTIONS = tuple(
    value for name, value in vars(SplitAction).items() if name.isupper() and isinstance(value, str)
)


def _project_for_status_readers(user: AbstractBaseUser, slug: str) -> Project:
    """Working members from viewer up, and auditors: the status is part of the audit."""
    try:
        return project_get_for_user(user=user, slug=slug, required=Role.AUDITOR)
    except PermissionDenied:
        return project_get_for_user(user=user, slug=slug, required=Role.VIEWER)


def audit_reason_field() -> serializers.CharField:
    """The optional `reason` of a split change, kept in its audit trail."""
    return serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why, for the audit trail."
    )


def stratify_by_field() -> serializers.CharField:
    """The optional attribute whose gold values a split draw is stratified by."""
    return serializers.CharField(
        max_length=200,
        required=False,
        help_text="An attribute id: draw proportionally to its gold values.",
    )


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


class SplitStatusApi(ApiView):
    @extend_schema(operation_id="splits_status", responses=SplitStatusOutput)
    def get(self, request: Request, slug: str) -> Response:
        project = _project_for_status_readers(request.user, slug)
        return Response(SplitStatusOutput(split_status(project=project)).data)


class SplitAssignDevelopmentApi(ApiView):
    class DevelopmentInputSerializer(serializers.Serializer):
        n = serializers.IntegerField(
            min_value=1, max_value=INTEGER_MAX, required=False, help_text="How many documents to draw."
        )
        document_ids = serializers.ListField(
            child=serializers.CharField(max_length=255),
            allow_empty=False,
            required=False,
            help_text="Exactly these documents (external ids), instead of a draw.",
        )
        seed = serializers.IntegerField(
            min_value=0, max_value=BIGINTEGER_MAX, required=False, help_text="The draw's seed; needed with n."
        )
        stratify_by = stratify_by_field()
        reason = audit_reason_field()

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
        examples=[
            OpenApiExample(
                "Draw 50 documents", value={"n": 50, "seed": 7, "reason": "first round"}, request_only=True
            ),
            OpenApiExample(
                "Name the documents", value={"document_ids": ["letter-1", "letter-2"]}, request_only=True
            ),
        ],
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


class SplitMoveToValidationApi(ApiView):
    class ValidationInputSerializer(serializers.Serializer):
        n = serializers.IntegerField(
            min_value=1, max_value=INTEGER_MAX, help_text="How many documents to draw."
        )
        seed = serializers.IntegerField(min_value=0, max_value=BIGINTEGER_MAX, help_text="The draw's seed.")
        run = serializers.IntegerField(
            min_value=1,
            max_value=BIGINTEGER_MAX,
            help_text="The scored development run whose configuration is validated.",
        )
        stratify_by = stratify_by_field()
        reason = audit_reason_field()

    @extend_schema(
        operation_id="splits_move_to_validation",
        request=ValidationInputSerializer,
        responses=SplitTransitionOutput,
        examples=[
            OpenApiExample(
                "Validate run 12 on 20 documents",
                value={"n": 20, "seed": 11, "run": 12, "reason": "best development F1"},
                request_only=True,
            )
        ],
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
    reason = audit_reason_field()


DECISION_EXAMPLES = [
    OpenApiExample(
        "With a reason", value={"reason": "validation F1 within the CI of development"}, request_only=True
    )
]


class SplitAcceptApi(ApiView):
    @extend_schema(
        operation_id="splits_accept",
        request=SplitDecisionInput,
        responses=SplitTransitionOutput,
        examples=DECISION_EXAMPLES,
    )
    def post(self, request: Request, slug: str) -> Response:
        """Accept: every unassigned document becomes a test document; splits are sealed; the project is finished."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = SplitDecisionInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        documents = split_accept(
            project=project, actor=request.user, request_id=request.request_id, **serializer.validated_data
        )
        return _transition_response(project, documents)


class SplitRejectApi(ApiView):
    @extend_schema(
        operation_id="splits_reject",
        request=SplitDecisionInput,
        responses=SplitTransitionOutput,
        examples=DECISION_EXAMPLES,
    )
    def post(self, request: Request, slug: str) -> Response:
        """Reject: validation documents return to development and the chosen configuration is cleared."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.MANAGER)
        serializer = SplitDecisionInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        documents = split_reject(
            project=project, actor=request.user, request_id=request.request_id, **serializer.validated_data
        )
        return _transition_response(project, documents)


class SplitEventListApi(ApiView):
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

    class FilterSerializer(serializers.Serializer):
        document = serializers.CharField(
            required=False, max_length=255, help_text="Only this document's events (external id)."
        )
        action = ChoiceField(
            choices=SPLIT_ACTIONS, required=False, help_text="Only this action, e.g. access_refused."
        )

    query_serializers = {"get": FilterSerializer}
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="splits_events",
        responses=paginated(SplitEventOutputSerializer, "SplitEventPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        """Every split event of the project, oldest first. Auditors and managers."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.AUDITOR)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        events = split_events(
            project=project,
            document_external_id=filters.validated_data.get("document"),
            action=filters.validated_data.get("action"),
        )
        paginator = KeysetPagination()
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(self.SplitEventOutputSerializer(page, many=True).data)


class SplitDocumentListApi(ApiView):
    """The documents to run on now: id, external id, name and text. Never gold."""

    class SplitDocumentOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        external_id = serializers.CharField()
        name = serializers.CharField()
        text = serializers.CharField()

    class FilterSerializer(serializers.Serializer):
        stage = ChoiceField(
            choices=["current", *RunStage.values],
            default="current",
            help_text="`current` (the stage the project's phase opens), development, validation, test or "
            "all. The test documents are refused (403) while they are held back.",
        )

    query_serializers = {"get": FilterSerializer}
    paginated_methods = ("get",)

    @extend_schema(
        operation_id="splits_documents",
        responses=paginated(SplitDocumentOutputSerializer, "SplitDocumentPage"),
    )
    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        documents = split_current_documents(
            project=project,
            stage=filters.validated_data["stage"],
            user=request.user,
            request_id=request.request_id,
        )
        paginator = KeysetPagination()
        page = paginator.paginate_queryset(documents, request, view=self)
        return paginator.get_paginated_response(self.SplitDocumentOutputSerializer(page, many=True).data)
