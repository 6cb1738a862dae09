"""A dev_val_test project with fifty letters, and runs made the way the run services make them.

alice manages the project, bob views it, dave audits it, charlie is an outsider.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotations.models import Document, EvaluationStrategy, Membership, ProjectPhase
from annotations.roles import Role
from experiments.models import ExperimentRun, RunKind, RunStatus

WARDS = ["cardiology", "oncology", "surgery"]


@pytest.fixture
def dave(project):
    """The project's auditor: reads the split audit, never gold."""
    dave = get_user_model().objects.create_user(username="dave", password="dave-password")
    Membership.objects.create(project=project, user=dave, role=Role.AUDITOR)
    return dave


@pytest.fixture
def letters(project):
    """alice's project under dev_val_test, with fifty letters from three wards."""
    project.strategy = EvaluationStrategy.DEV_VAL_TEST
    project.phase = ProjectPhase.DEVELOPMENT
    project.save()
    for number in range(50):
        Document.objects.create(
            project=project,
            external_id=f"letter-{number:03d}",
            text=f"Discharge letter number {number}.",
            metadata={"ward": WARDS[number % 3]},
        )
    return project


def make_run(project, *, stage: str, config_hash: str = "config-a", status: str = RunStatus.SCORED, **fields):
    """A run as the run services would leave it (scored unless said otherwise)."""
    return ExperimentRun.objects.create(
        project=project,
        name=fields.pop("name", f"{stage} {config_hash}"),
        kind=RunKind.ATTRIBUTES,
        config_hash=config_hash,
        stage=stage,
        status=status,
        **fields,
    )
