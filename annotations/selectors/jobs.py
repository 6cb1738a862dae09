"""Reads of jobs, scoped like everything else by the projects the user is a member of."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.http import Http404

from annotations.models import Job, Project


def job_get_for_user(*, user: AbstractBaseUser, job_id: int) -> Job:
    """A job of a project `user` is a member of (any role), or one they started without a project.

    Anything else is Http404, as for a job that does not exist.
    """
    if not user.is_authenticated:
        raise Http404("No such job.")
    job = (
        Job.objects.filter(pk=job_id)
        .filter(Q(project__memberships__user=user) | Q(project__isnull=True, created_by=user))
        .select_related("project")
        .first()
    )
    if job is None:
        raise Http404("No such job.")
    return job


def job_list(*, project: Project) -> QuerySet[Job]:
    """The jobs of an (already authorised) project, newest first."""
    return Job.objects.filter(project=project).select_related("project").order_by("-id")
