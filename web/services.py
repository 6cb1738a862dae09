"""Writes made from the pages."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Membership, Project
from annotations.roles import Role
from annotations.selectors import project_check_role


@transaction.atomic
def member_password_set(
    *, project: Project, actor: AbstractBaseUser, username: str, password: str
) -> AbstractBaseUser:
    """Give a member of `project` who signs in with tokens only (no usable password) a password.

    Only a manager of the project may, and only for such a member who is not staff: a password a
    member already has is theirs to change (`manage.py changepassword` for administrators), so a
    manager of one project can never take over an account that holds rights elsewhere by its password.
    """
    project_check_role(user=actor, project=project, required=Role.MANAGER)
    membership = (
        Membership.objects.select_for_update()
        .select_related("user")
        .filter(project=project, user__username=username)
        .first()
    )
    if membership is None:
        raise ValidationError({"username": f"{username!r} is not a member of project {project.slug!r}."})
    user = membership.user
    if user.has_usable_password() or user.is_staff or user.is_superuser:
        raise ValidationError(
            {
                "username": f"{username!r} already signs in with a password; only they or an administrator can change it."
            }
        )
    validate_password(password, user)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user
