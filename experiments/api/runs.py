"""The runs API: create a run, list a project's runs, read one run.

A pipeline (role `pipeline` or above) creates runs; every member from viewer up reads them; a
manager deletes them (not the final test result); a non-member gets 404, as for a run that does not
exist.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.common import paginated
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from annotations.selectors.jobs import jobs_redacted
from evalproject.api import ApiView
from evalproject.pagination import KeysetPagination
from evalproject.validation import (
    MAX_JSON_DEPTH,
    ChoiceField,
    StorableJSONField,
    json_problems,
    raise_json_problems,
)
from experiments.models import ExperimentRun, RunKind, RunSource, RunStatus
from experiments.selectors import run_get_for_user, run_list
from experiments.services import run_create, run_delete
from experiments.services.runs import run_config_parse


@extend_schema_field(
    {
        "oneOf": [{"type": "object", "additionalProperties": True}, {"type": "string"}],
        "description": "A JSON object, or YAML text of a mapping.",
    }
)
class ConfigField(serializers.Field):
    """The configuration as a JSON object or as YAML text; either must be storable as JSON."""

    def to_internal_value(self, data):
        if data is None:
            return data
        if isinstance(data, str):
            try:
                config, _ = run_config_parse(data)
            except RecursionError:
                raise serializers.ValidationError(
                    f"the YAML is nested deeper than {MAX_JSON_DEPTH} levels"
                ) from None
        elif isinstance(data, dict):
            config = data
        else:
            raise serializers.ValidationError("must be an object or YAML text")
        raise_json_problems(json_problems(config))
        return data

    def to_representation(self, value):
        return value


class RunProgressOutput(serializers.Serializer):
    job = serializers.IntegerField(help_text="The latest scoring job (GET /jobs/{id}/ for all of it).")
    state = serializers.CharField(help_text="queued, running, succeeded or failed.")
    done = serializers.IntegerField()
    total = serializers.IntegerField(help_text="0 while not yet known.")
    errors = serializers.ListField(child=serializers.JSONField(), help_text="The job's errors, if it failed.")


class RunTotalsOutput(serializers.Serializer):
    cost_usd = serializers.FloatField(allow_null=True)
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)
    duration_seconds = serializers.FloatField(allow_null=True, help_text="The sum of the documents' timings.")


class RunOutput(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    gold_version = serializers.SerializerMethodField(help_text="The gold version it was scored against.")
    progress = serializers.SerializerMethodField(help_text="The latest scoring job's progress; null before.")
    totals = serializers.SerializerMethodField(help_text="Summed over the run's documents when scored.")

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

    @extend_schema_field(RunProgressOutput(allow_null=True))
    def get_progress(self, run: ExperimentRun) -> dict | None:
        job = run.scoring_job
        if job is None:
            return None
        return {
            "job": job.pk,
            "state": job.state,
            "done": job.progress_done,
            "total": job.progress_total,
            # Redacted as the job itself is served (no held-back document named).
            "errors": jobs_redacted([job])[0].errors,
        }

    @extend_schema_field(RunTotalsOutput)
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


class RunListCreateApi(ApiView):
    class RunCreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, help_text="A name for people; need not be unique.")
        kind = ChoiceField(
            choices=RunKind.choices,
            help_text="`spans` (de-identification) or `attributes` (data extraction).",
        )
        source = ChoiceField(
            choices=RunSource.choices,
            default=RunSource.LLM,
            help_text="`llm` for a pipeline; `human` for a second annotator, scored the same way.",
        )
        config = ConfigField(
            required=False,
            allow_null=True,
            help_text="The pipeline's configuration, as a JSON object or YAML text. Snapshotted and hashed "
            "with the prompts; `edit_distance_match_threshold` and `number_format` here override the "
            "project's for this run.",
        )
        prompts = serializers.ListField(
            child=StorableJSONField(),
            required=False,
            default=list,
            help_text="The prompts used. Attribute runs: objects with the `attribute_id` each extracts "
            "(it must be in the project's schema) and its `prompt`.",
        )
        model = serializers.CharField(
            max_length=200, required=False, allow_blank=True, default="", help_text="e.g. gpt-4o-mini."
        )
        provider = serializers.CharField(
            max_length=200, required=False, allow_blank=True, default="", help_text="e.g. openai."
        )
        stage = serializers.CharField(
            max_length=20,
            required=False,
            allow_blank=True,
            default="",
            help_text="The split the run is scored on (development, validation, test or all); empty for "
            "the stage the project's phase opens.",
        )

    class FilterSerializer(serializers.Serializer):
        kind = ChoiceField(choices=RunKind.choices, required=False, help_text="Only runs of this kind.")
        status = ChoiceField(choices=RunStatus.choices, required=False, help_text="Only runs in this status.")

    class Pagination(KeysetPagination):
        ordering = "-id"

    query_serializers = {"get": FilterSerializer}
    paginated_methods = ("get",)

    @extend_schema(operation_id="runs_list", responses=paginated(RunOutput, "RunPage"))
    def get(self, request: Request, slug: str) -> Response:
        """The project's runs, newest first. Every member from viewer up."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        runs = run_list(project=project, **filters.validated_data)
        paginator = self.Pagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response(RunOutput(page, many=True).data)

    @extend_schema(
        operation_id="runs_create",
        request=RunCreateInputSerializer,
        responses={201: RunDetailOutput},
        examples=[
            OpenApiExample(
                "An attribute run with its configuration and prompts",
                value={
                    "name": "gpt-4o-mini, prompt v3",
                    "kind": "attributes",
                    "config": {"temperature": 0, "chunk_size": 4000},
                    "prompts": [{"attribute_id": "101", "prompt": "Was the trial randomised?"}],
                    "model": "gpt-4o-mini",
                    "provider": "openai",
                },
                request_only=True,
            ),
            OpenApiExample(
                "A span run with a YAML configuration",
                value={
                    "name": "deid baseline",
                    "kind": "spans",
                    "config": "model: deid-small\nthreshold: 0.5\n",
                    "model": "deid-small",
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        """Create an open run; post its predictions, then finalize it. Pipelines and managers."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.PIPELINE)
        data = self.RunCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_create(project=project, user=request.user, **data.validated_data)
        return Response(RunDetailOutput(run).data, status=status.HTTP_201_CREATED)


class RunDetailApi(ApiView):
    @extend_schema(operation_id="runs_retrieve", responses=RunDetailOutput)
    def get(self, request: Request, run_id: int) -> Response:
        """One run with its configuration, prompts, progress and totals."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        return Response(RunDetailOutput(run).data)

    @extend_schema(operation_id="runs_destroy", responses={204: None})
    def delete(self, request: Request, run_id: int) -> Response:
        """Delete the run with its predictions, results and scoring jobs. Managers only; never the final
        test result, nor a run being scored (409)."""
        run = run_get_for_user(user=request.user, run_id=run_id, required=Role.MANAGER)
        run_delete(run=run, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
