"""GET /runs/{id}/artefacts.zip: every artefact of the run's scoring (docs/semantics.md section 4)."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request

from evalproject.api import ApiView
from experiments.selectors import run_get_for_user
from metrics.api.results import ScoringQuery, scoring_for_request
from metrics.artefacts.exports import artefacts_zip


class RunArtefactsApi(ApiView):
    query_serializers = {"get": ScoringQuery}

    @extend_schema(
        operation_id="runs_artefacts",
        responses={
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="A zip of the scoring's artefacts: the report, the comparison CSV, the run "
                "records and the configuration.",
            )
        },
    )
    def get(self, request: Request, run_id: int) -> FileResponse:
        """Download every artefact of a scoring as one zip."""
        run = run_get_for_user(user=request.user, run_id=run_id)
        scoring = scoring_for_request(request, run, with_report=True)
        handle = artefacts_zip(run=run, scoring=scoring)
        return FileResponse(
            handle,
            as_attachment=True,
            filename=f"run-{run.pk}-scoring-{scoring.number}.zip",
            content_type="application/zip",
        )
