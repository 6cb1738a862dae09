"""A document with a split cannot be deleted on its own: the test set and the audit trail stay whole."""

from __future__ import annotations

import pytest
from django.db.models import RestrictedError

from annotations.models import Document, Project
from experiments.models import SplitAssignment, SplitEvent
from experiments.splits import split_assign_development


def test_a_document_with_a_split_cannot_be_deleted(letters, alice):
    split_assign_development(project=letters, actor=alice, document_ids=["letter-001"])

    with pytest.raises(RestrictedError):
        Document.objects.get(project=letters, external_id="letter-001").delete()

    assert SplitEvent.objects.filter(document__external_id="letter-001").exists()


def test_a_document_without_a_split_can_still_be_deleted(letters):
    Document.objects.get(project=letters, external_id="letter-002").delete()

    assert not Document.objects.filter(project=letters, external_id="letter-002").exists()


def test_deleting_the_whole_project_removes_its_splits_too(letters, alice):
    split_assign_development(project=letters, actor=alice, n=5, seed=1)

    Project.objects.get(pk=letters.pk).delete()

    assert not SplitAssignment.objects.exists()
    assert not SplitEvent.objects.exists()
