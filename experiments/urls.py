"""API routes of the experiments app, mounted under /api/v1/."""

from django.urls import path

from experiments.api import documents, predictions, runs, splits

urlpatterns: list = [
    path("projects/<slug:slug>/documents/", documents.DocumentListApi.as_view(), name="project-documents"),
    path("projects/<slug:slug>/runs/", runs.RunListCreateApi.as_view(), name="run-list"),
    path("runs/<int:run_id>/", runs.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<int:run_id>/predictions/", predictions.PredictionsApi.as_view(), name="run-predictions"),
    path("projects/<slug:slug>/splits/", splits.SplitStatusApi.as_view(), name="split-status"),
    path(
        "projects/<slug:slug>/splits/development/",
        splits.SplitAssignDevelopmentApi.as_view(),
        name="split-development",
    ),
    path(
        "projects/<slug:slug>/splits/validation/",
        splits.SplitMoveToValidationApi.as_view(),
        name="split-validation",
    ),
    path("projects/<slug:slug>/splits/accept/", splits.SplitAcceptApi.as_view(), name="split-accept"),
    path("projects/<slug:slug>/splits/reject/", splits.SplitRejectApi.as_view(), name="split-reject"),
    path("projects/<slug:slug>/splits/events/", splits.SplitEventListApi.as_view(), name="split-events"),
    path(
        "projects/<slug:slug>/splits/documents/",
        splits.SplitDocumentListApi.as_view(),
        name="split-documents",
    ),
]
