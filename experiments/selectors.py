"""Reads of runs. Every read starts from the user's membership of the run's project (404 for outsiders)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import Http404

from annotations.models import Project
from annotations.roles import Role
from annotations.selectors import project_check_role
from experiments.models import ExperimentRun


def run_get_for_user(*, user: AbstractBaseUser, run_id: int, required: str = Role.VIEWER) -> ExperimentRun:
    """The run, when `user` may do what needs `required` in its project.

    A run that does not exist and a run of a project the user is not a member of are both Http404;
    a member whose role is too low gets PermissionDenied (403).
    """
    run = (
        ExperimentRun.objects.select_related("project", "gold_version", "scoring_job")
        .filter(pk=run_id)
        .first()
    )
    if run is None:
        raise Http404("No such run.")
    try:
        project_check_role(user=user, project=run.project, required=required)
    except Http404:
        # For an outsider the run does not exist, whatever project it belongs to.
        raise Http404("No such run.") from None
    return run


def run_list(
    *, project: Project, kind: str | None = None, status: str | None = None
) -> QuerySet[ExperimentRun]:
    """The runs of an (already authorised) project, with what the list shows in one query."""
    runs = ExperimentRun.objects.filter(project=project).select_related(
        "project", "gold_version", "scoring_job"
    )
    if kind:
        runs = runs.filter(kind=kind)
    if status:
        runs = runs.filter(status=status)
    return runs
