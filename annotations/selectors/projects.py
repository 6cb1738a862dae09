"""Reads for projects and what is inside them. Every query starts from the user's memberships."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet
from django.http import Http404
from rest_framework.exceptions import PermissionDenied

from annotations.importers.labels import CANONICAL_TYPES
from annotations.models import EntityType, GoldKind, GoldSpan, GoldVersion, Membership, Project
from annotations.roles import Role, role_allows


def project_list_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    """The projects `user` is a member of, whatever the role."""
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(memberships__user=user).annotate(current_role=F("memberships__role"))


def membership_role(*, user: AbstractBaseUser, project: Project) -> str | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


def project_get_for_user(*, user: AbstractBaseUser, slug: str, required: str | None = Role.VIEWER) -> Project:
    """The project, when `user` may do what needs the `required` role in it (None: any member).

    A non-member gets Http404, exactly as for a project that does not exist: no hint that it does.
    A member whose role is too low gets PermissionDenied (403) naming the role needed.
    """
    membership = (
        Membership.objects.select_related("project").filter(project__slug=slug, user=user).first()
        if user.is_authenticated
        else None
    )
    if membership is None:
        raise Http404("No such project.")
    if required is not None and not role_allows(membership.role, required):
        raise PermissionDenied(
            f"This needs the {required} role in project {slug!r}; you are {membership.role}."
        )
    membership.project.current_role = membership.role
    return membership.project


def project_check_role(*, user: AbstractBaseUser, project: Project, required: str) -> str:
    """Check `user`'s role in an already-found project; same 404/403 rules as project_get_for_user."""
    role = membership_role(user=user, project=project)
    if role is None:
        raise Http404("No such project.")
    if not role_allows(role, required):
        raise PermissionDenied(f"This needs the {required} role in project {project.slug!r}; you are {role}.")
    return role


def membership_list(*, project: Project) -> QuerySet[Membership]:
    """The members of `project` with their users, in one query whatever their number."""
    return Membership.objects.filter(project=project).select_related("user").order_by("id")


def entity_type_names(*, project: Project) -> list[str]:
    """The canonical span types of the project: those of its schema and those of its current span gold,
    by name. Only canonical types: a raw label of a held-back document is never named here."""
    declared = set(EntityType.objects.filter(project=project).values_list("name", flat=True))
    current = GoldVersion.objects.filter(project=project, kind=GoldKind.SPANS).order_by("-number")[:1]
    in_gold = set(
        GoldSpan.objects.filter(gold_version__in=current, entity_type__in=CANONICAL_TYPES)
        .order_by()
        .values_list("entity_type", flat=True)
        .distinct()
    )
    return sorted(declared | in_gold)
