"""API routes of the annotations app, mounted under /api/v1/."""

from django.urls import path

from annotations.api.imports import ImportCreateApi
from annotations.api.jobs import JobDetailApi, JobRetryApi, ProjectJobListApi
from annotations.api.members import MemberListUpsertApi
from annotations.api.projects import ProjectDetailApi, ProjectListCreateApi
from annotations.api.purge import ProjectPurgeApi

urlpatterns = [
    path("projects/", ProjectListCreateApi.as_view(), name="project-list"),
    path("projects/<slug:slug>/", ProjectDetailApi.as_view(), name="project-detail"),
    path("projects/<slug:slug>/members/", MemberListUpsertApi.as_view(), name="project-members"),
    path("projects/<slug:slug>/imports/", ImportCreateApi.as_view(), name="project-imports"),
    path("projects/<slug:slug>/jobs/", ProjectJobListApi.as_view(), name="project-jobs"),
    path("projects/<slug:slug>/purge/", ProjectPurgeApi.as_view(), name="project-purge"),
    path("jobs/<int:job_id>/", JobDetailApi.as_view(), name="job-detail"),
    path("jobs/<int:job_id>/retry/", JobRetryApi.as_view(), name="job-retry"),
]
