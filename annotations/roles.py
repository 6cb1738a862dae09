"""Project roles and what each may do.

The working roles are ordered: each includes the rights of those before it. The auditor stands apart:
it reads the split audit trail and nothing else (no gold, no metrics), so an auditor can check that
no one tuned on test data without becoming able to do so.
"""

from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer: reads metrics and comparison rows"
    ANNOTATOR = "annotator", "Annotator: also imports gold"
    PIPELINE = "pipeline", "Pipeline: also creates runs and posts predictions"
    MANAGER = "manager", "Manager: also members, settings and splits"
    AUDITOR = "auditor", "Auditor: reads the split audit only"


WORKING_ROLE_ORDER = [Role.VIEWER, Role.ANNOTATOR, Role.PIPELINE, Role.MANAGER]


def role_allows(role: str, required: str) -> bool:
    """True when a member with `role` may do what needs `required`."""
    if required == Role.AUDITOR:
        # Reading the audit trail: auditors and managers.
        return role in (Role.AUDITOR, Role.MANAGER)
    if role == Role.AUDITOR:
        return False
    return WORKING_ROLE_ORDER.index(role) >= WORKING_ROLE_ORDER.index(required)
