"""The runs API: create a run, list a project's runs, read one run.

A pipeline (role `pipeline` or above) creates runs; every member from viewer up reads them; a
manager deletes them (not the final test result); a non-member gets 404, as for a run that does not
exist.
"""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.pagination import KeysetPagination
from experiments.models import ExperimentRun, RunKind, RunSource
from experiments.selectors import run_get_for_user, run_list
from experiments.services import run_create, run_delete


class ConfigField(serializers.Field):
    """The configuration as a JSON object or as YAML text."""

    def to_internal_value(self, data):
        if data is None or isinstance(data, (dict, str)):
            return data
        raise serializers.ValidationError("must be an object or YAML text")

    def to_representation(self, value):
        return value


class RunOutput(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    gold_version = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    totals = serializers.SerializerMethodField()

    class Meta:
        model = ExperimentRun
        fields = [
            "id",
            "project",
            "name",
            "kind",
            "source",
            "status",
            "stage",
            "is_final",
            "model",
            "provider",
            "config_hash",
            "gold_version",
            "progress",
            "totals",
            "created_at",
            "finalized_at",
        ]

    def get_gold_version(self, run: ExperimentRun) -> int | None:
        return None if run.gold_version is None else run.gold_version.number

    def get_progress(self, run: ExperimentRun) -> dict | None:
        job = run.scoring_job
        if job is None:
            return None
        return {
            "job": job.pk,
            "state": job.state,
            "done": job.progress_done,
            "total": job.progress_total,
            "errors": job.errors,
        }

    def get_totals(self, run: ExperimentRun) -> dict:
        return {
            "cost_usd": run.total_cost_usd,
            "input_tokens": run.total_input_tokens,
            "output_tokens": run.total_output_tokens,
            "duration_seconds": run.total_duration_seconds,
        }


class RunDetailOutput(RunOutput):
    config = serializers.JSONField()

    class Meta(RunOutput.Meta):
        fields = [*RunOutput.Meta.fields, "config", "config_yaml", "prompts"]


class RunListCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        kind = serializers.ChoiceField(choices=RunKind.choices)
        source = serializers.ChoiceField(choices=RunSource.choices, default=RunSource.LLM)
        config = ConfigField(required=False, allow_null=True)
        prompts = serializers.ListField(child=serializers.JSONField(), required=False, default=list)
        model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        provider = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        stage = serializers.CharField(max_length=20, required=False, allow_blank=True, default="")

    class Pagination(KeysetPagination):
        ordering = "-id"

    def get(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        runs = run_list(
            project=project, kind=request.query_params.get("kind"), status=request.query_params.get("status")
        )
        paginator = self.Pagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response(RunOutput(page, many=True).data)

    def post(self, request: Request, slug: str) -> Response:
        project = project_get_for_user(user=request.user, slug=slug, required=Role.PIPELINE)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_create(project=project, user=request.user, **data.validated_data)
        return Response(RunDetailOutput(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(APIView):
    def get(self, request: Request, run_id: int) -> Response:
        run = run_get_for_user(user=request.user, run_id=run_id)
        return Response(RunDetailOutput(run).data)

    def delete(self, request: Request, run_id: int) -> Response:
        """A manager deletes a run with its predictions and results; never the final test result (409)."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.MANAGER)
        run_delete(run=run, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
