"""GET /runs/{id}/artefacts.zip: every artefact of the run's scoring (SEMANTICS.md section 3)."""

from __future__ import annotations

from django.http import FileResponse
from rest_framework.request import Request
from rest_framework.views import APIView

from experiments.selectors import run_get_for_user
from metrics.api.results import _scoring_for
from metrics.exports import artefacts_zip


class RunArtefactsApi(APIView):
    def get(self, request: Request, run_id: int) -> FileResponse:
        run = run_get_for_user(user=request.user, run_id=run_id)
        scoring = _scoring_for(request, run, with_report=True)
        handle = artefacts_zip(run=run, scoring=scoring)
        return FileResponse(
            handle,
            as_attachment=True,
            filename=f"run-{run.pk}-scoring-{scoring.number}.zip",
            content_type="application/zip",
        )
