"""API routes of the metrics app, mounted under /api/v1/."""

from django.urls import path

from metrics.api import agreement, artefacts, gate, gold, results, scoring
from metrics.api import run_pair as compare

urlpatterns: list = [
    path(
        "projects/<slug:slug>/agreement/", agreement.ProjectAgreementApi.as_view(), name="project-agreement"
    ),
    path(
        "projects/<slug:slug>/gold/versions/<int:a>/diff/<int:b>/",
        gold.GoldVersionDiffApi.as_view(),
        name="gold-version-diff",
    ),
    path("runs/compare/", compare.RunCompareApi.as_view(), name="run-compare"),
    path("runs/<int:run_id>/finalize/", scoring.RunFinalizeApi.as_view(), name="run-finalize"),
    path("runs/<int:run_id>/rescore/", scoring.RunRescoreApi.as_view(), name="run-rescore"),
    path("runs/<int:run_id>/metrics/", results.RunMetricsApi.as_view(), name="run-metrics"),
    path("runs/<int:run_id>/metric-values/", results.RunMetricValuesApi.as_view(), name="run-metric-values"),
    path("runs/<int:run_id>/scorings/", results.RunScoringListApi.as_view(), name="run-scorings"),
    path("runs/<int:run_id>/comparison/", results.RunComparisonApi.as_view(), name="run-comparison"),
    path("runs/<int:run_id>/artefacts.zip", artefacts.RunArtefactsApi.as_view(), name="run-artefacts"),
    path("runs/<int:run_id>/gate/", gate.RunGateApi.as_view(), name="run-gate"),
]
