"""DELETE /api/v1/projects/{slug}/documents/: alice (manager) removes documents from the gold, which
makes a new gold version without them; older versions and their scores stay; bob may not."""

from __future__ import annotations

import pytest

from annotations.importers.labels import LabelMap
from annotations.importers.sources import ArchiveLimits
from annotations.models import Document, GoldSpan, GoldVersion, GoldVersionDocument
from annotations.services import gold_import
from annotations.services.gold_read import read_spans
from tests.services.test_gold_import_fixtures import letters_jsonl

pytestmark = pytest.mark.django_db

URL = "/api/v1/projects/letters/documents/"


@pytest.fixture
def gold(project, tmp_path):
    path = tmp_path / "letters.jsonl"
    path.write_bytes(letters_jsonl())
    gold_set = read_spans(
        path,
        display_name=path.name,
        label_map=LabelMap.default(),
        annotator=None,
        limits=ArchiveLimits(),
        progress=lambda done: None,
    )
    gold_import(project=project, gold=gold_set, source=path.name)
    return GoldVersion.objects.get(project=project)


def test_alice_removes_a_document_and_gets_a_new_version_without_it(gold, alice_client):
    response = alice_client.delete(URL, {"document_ids": ["letter-1"]}, format="json")

    assert response.status_code == 200, response.data
    (counts,) = response.data["gold_versions"]
    assert counts["gold_version"] == 2
    assert counts["documents"] == 2 and counts["documents_removed"] == 1
    new = GoldVersion.objects.get(project=gold.project, number=2)
    members = set(
        GoldVersionDocument.objects.filter(gold_version=new).values_list("document__external_id", flat=True)
    )
    assert members == {"letter-2", "letter-3"}
    assert not GoldSpan.objects.filter(gold_version=new, document__external_id="letter-1").exists()
    assert GoldSpan.objects.filter(gold_version=new, document__external_id="letter-2").count() == 2
    # The old version is unchanged, and the document itself stays (older versions point at it).
    assert GoldVersionDocument.objects.filter(gold_version=gold).count() == 3
    assert GoldSpan.objects.filter(gold_version=gold).count() == 4
    assert Document.objects.filter(external_id="letter-1").exists()
    assert new.content_hash and new.content_hash != gold.content_hash


def test_an_unknown_document_is_a_400_and_nothing_changes(gold, alice_client):
    response = alice_client.delete(URL, {"document_ids": ["letter-1", "nope"]}, format="json")

    assert response.status_code == 400
    assert "nope" in str(response.data)
    assert GoldVersion.objects.count() == 1


def test_removing_documents_already_out_of_the_gold_is_a_400(gold, alice_client):
    assert alice_client.delete(URL, {"document_ids": ["letter-1"]}, format="json").status_code == 200

    response = alice_client.delete(URL, {"document_ids": ["letter-1"]}, format="json")

    assert response.status_code == 400
    assert GoldVersion.objects.count() == 2


def test_bob_may_not_remove_documents_and_charlie_gets_404(gold, bob_client, charlie_client):
    assert bob_client.delete(URL, {"document_ids": ["letter-1"]}, format="json").status_code == 403
    assert charlie_client.delete(URL, {"document_ids": ["letter-1"]}, format="json").status_code == 404
    assert GoldVersion.objects.count() == 1
