from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from annotations.api.jobs import JobOutputSerializer, ProblemSerializer
from annotations.roles import Role
from annotations.selectors import project_get_for_user
from evalproject.api import ApiView
from metrics.api.scoring import job_accepted
from metrics.services.agreement import agreement_job_create, agreement_latest


class AgreementOutput(serializers.Serializer):
    job = serializers.IntegerField(help_text="The agreement job that computed this result.")
    computed_at = serializers.DateTimeField(help_text="When that job finished.")
    format_version = serializers.IntegerField(help_text="Version of the agreement.json contract.")
    documents_held_back = serializers.IntegerField(
        help_text="Documents held back for the test and left out of the computation."
    )
    config = serializers.DictField(help_text="`intervals`: confidence level, resamples and seed used.")
    spans = serializers.DictField(
        required=False,
        help_text="Span agreement: `pairs` (per pair of annotators: F1 exact, overlap, typed and Cohen's "
        "kappa on characters, each with `_ci`), `overall` (Krippendorff's alpha with every annotator), "
        "`single_annotator_documents`, `labels` and `gold_version`. Absent without span gold and human runs.",
    )
    attributes = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Per attribute: `measure` (cohen_kappa, krippendorff_alpha_nominal or _interval), "
        "`value`, `value_ci`, `percent_agreement`, `percent_agreement_ci`, `annotators`, `documents`.",
    )
    attributes_gold_version = serializers.IntegerField(
        required=False, help_text="The attribute gold version the attributes were compared on."
    )
    warnings = ProblemSerializer(
        many=True, required=False, help_text="Values left out (they do not coerce to the attribute's type)."
    )


_CI = {"low": 0.84, "high": 0.93, "level": 0.95, "resamples": 1000, "method": "cluster_bootstrap_percentile"}
AGREEMENT_EXAMPLE = {
    "job": 42,
    "computed_at": "2026-12-01T15:00:00Z",
    "format_version": 1,
    "documents_held_back": 0,
    "config": {"intervals": {"level": 0.95, "resamples": 1000, "seed": 0, "method": "cluster_bootstrap"}},
    "spans": {
        "pairs": [
            {
                "a": "alice",
                "b": "bob",
                "documents": 20,
                "f1_exact": 0.89,
                "f1_exact_ci": _CI,
                "cohen_kappa_chars": 0.88,
                "cohen_kappa_chars_ci": _CI,
            }
        ],
        "overall": {
            "annotators": ["alice", "bob"],
            "documents": 20,
            "krippendorff_alpha_chars": 0.88,
            "krippendorff_alpha_chars_ci": _CI,
        },
        "single_annotator_documents": ["doc-7"],
        "labels": ["O", "PERSON"],
        "gold_version": 3,
    },
}


class AgreementCreateOutput(serializers.Serializer):
    job = JobOutputSerializer(help_text="The agreement job; follow it at job_url until it succeeds or fails.")
    job_url = serializers.CharField(help_text="Where the job is read.")


class ProjectAgreementApi(ApiView):
    @extend_schema(
        operation_id="project_agreement_retrieve",
        responses={200: AgreementOutput},
        examples=[OpenApiExample("Spans, two annotators", value=AGREEMENT_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, slug: str) -> Response:
        """The latest agreement between the project's annotators (held-back documents left out); 404
        before the first agreement job succeeded. Every member from viewer up."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.VIEWER)
        job = agreement_latest(project=project)
        if job is None:
            raise NotFound(
                f"Project {slug!r} has no agreement result yet: POST to this address to compute it."
            )
        return Response({"job": job.pk, "computed_at": job.finished_at, **job.result})

    @extend_schema(
        operation_id="project_agreement_create", request=None, responses={202: AgreementCreateOutput}
    )
    def post(self, request: Request, slug: str) -> Response:
        """Compute the agreement between the project's annotators (the gold's and every human run's):
        a job, read at `job_url`; takes no body. Annotators and up."""
        project = project_get_for_user(user=request.user, slug=slug, required=Role.ANNOTATOR)
        job = agreement_job_create(project=project, user=request.user)
        return job_accepted(job, JobOutputSerializer)
