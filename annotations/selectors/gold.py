"""Reads of versioned gold: which version is current, and a version's gold as engine inputs.

A gold version is a full snapshot (see services.gold_import): the documents listed in
GoldVersionDocument are its gold set, and its spans or attribute values are the rows pointing at it.
Scoring reads one version by id and so never changes when a later import makes a new one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from django.db.models import Max, Q, QuerySet

from annotations.importers.span_types import SpanAnnotation, SpanDocument
from annotations.models import (
    Attribute,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
    Project,
)
from metrics.engine.attributes.types import (
    USE_TYPE_DEFAULT,
    AttributeSpec,
    AttributeType,
    FullTextDetail,
    GoldAnnotation,
    GoldDocument,
)


def documents_named(project_id: int, external_ids: Iterable[str]) -> Q:
    """Rows whose `document` is one of these external ids of the project: named with the project, so
    that the (project, external_id) index finds them (by external id alone, every document was scanned)."""
    return Q(document__project_id=project_id, document__external_id__in=external_ids)


def gold_version_current(*, project: Project, kind: str) -> GoldVersion | None:
    """The newest gold version of `kind` ("spans" or "attributes"), or None before the first import."""
    return GoldVersion.objects.filter(project=project, kind=kind).order_by("-number").first()


def gold_versions_current(*, project: Project) -> list[GoldVersion]:
    """The current version of each kind that has one (at most two rows, two queries)."""
    numbers = (
        GoldVersion.objects.filter(project=project).values("kind").annotate(newest=Max("number")).order_by()
    )
    wanted = {(row["kind"], row["newest"]) for row in numbers}
    if not wanted:
        return []
    versions = GoldVersion.objects.filter(project=project, number__in={number for _, number in wanted})
    return [version for version in versions if (version.kind, version.number) in wanted]


def gold_version_get(*, project: Project, kind: str, number: int) -> GoldVersion:
    """One version by its number; raises GoldVersion.DoesNotExist."""
    return GoldVersion.objects.get(project=project, kind=kind, number=number)


def gold_version_list(*, project: Project) -> QuerySet[GoldVersion]:
    return GoldVersion.objects.filter(project=project).select_related("created_by")


def gold_version_document_hashes(
    *, gold_version: GoldVersion, document_ids: Iterable[int] | None = None
) -> dict[int, str]:
    """document id -> hash of its gold in `gold_version` (all documents, or those of `document_ids`)."""
    rows = GoldVersionDocument.objects.filter(gold_version=gold_version)
    if document_ids is None:
        return dict(rows.values_list("document_id", "content_hash"))
    wanted = list(document_ids)
    found: dict[int, str] = {}
    for index in range(0, len(wanted), 5000):
        found.update(
            rows.filter(document_id__in=wanted[index : index + 5000]).values_list(
                "document_id", "content_hash"
            )
        )
    return found


def gold_version_external_ids(*, gold_version: GoldVersion) -> list[str]:
    """The external ids of the version's documents, in the order the gold selectors give them."""
    return list(
        GoldVersionDocument.objects.filter(gold_version=gold_version)
        .order_by("document__external_id")
        .values_list("document__external_id", flat=True)
    )


def gold_span_documents(
    *, gold_version: GoldVersion, external_ids: Collection[str] | None = None
) -> list[SpanDocument]:
    """Every document of a spans version (or those of `external_ids`) with its text and sorted gold
    spans, for the span engine, in external id order.

    Two streamed queries whatever the size: documents (with text), then spans ordered by document.
    Documents with no spans are included with an empty list: they are scored for false positives.
    """
    if gold_version.kind != GoldKind.SPANS:
        raise ValueError(f"gold version {gold_version} holds {gold_version.kind}, not spans")
    documents: dict[int, SpanDocument] = {}
    listed = GoldVersionDocument.objects.filter(gold_version=gold_version)
    if external_ids is not None:
        listed = listed.filter(documents_named(gold_version.project_id, external_ids))
    rows = listed.order_by("document__external_id").values_list(
        "document_id", "document__external_id", "document__text"
    )
    for document_id, external_id, text in rows.iterator(chunk_size=2000):
        documents[document_id] = SpanDocument(external_id, text, [], source=f"gold v{gold_version.number}")
    spans = GoldSpan.objects.filter(gold_version=gold_version)
    if external_ids is not None:
        spans = spans.filter(document_id__in=list(documents))
    spans = spans.order_by("document_id", "start", "end", "entity_type").values_list(
        "document_id", "start", "end", "entity_type", "label"
    )
    for document_id, start, end, entity_type, label in spans.iterator(chunk_size=10000):
        documents[document_id].spans.append(SpanAnnotation(start, end, entity_type, label))
    return list(documents.values())


def attribute_specs(*, project: Project) -> list[AttributeSpec]:
    """The project's attribute schema as the attribute engine takes it, in schema order."""
    return [attribute_spec(attribute) for attribute in Attribute.objects.filter(project=project)]


def attribute_spec(attribute: Attribute) -> AttributeSpec:
    return AttributeSpec(
        attribute_id=attribute.attribute_id,
        label=attribute.label,
        type=AttributeType(attribute.type),
        prompt=attribute.prompt,
        missing_default=USE_TYPE_DEFAULT if attribute.uses_type_default else attribute.missing_default,
    )


def gold_attribute_documents(
    *, gold_version: GoldVersion, external_ids: Collection[str] | None = None
) -> list[GoldDocument]:
    """Every document of an attributes version (or those of `external_ids`) with its gold
    annotations, for the attribute engine, in external id order.

    A document listed in the version without any value is passed with no annotations: the engine
    lists it as unscored (an EPPI reference nobody coded).
    """
    if gold_version.kind != GoldKind.ATTRIBUTES:
        raise ValueError(f"gold version {gold_version} holds {gold_version.kind}, not attributes")
    annotations: dict[int, dict[str, GoldAnnotation]] = {}
    values = GoldAttributeValue.objects.filter(gold_version=gold_version)
    listed = GoldVersionDocument.objects.filter(gold_version=gold_version)
    if external_ids is not None:
        named = documents_named(gold_version.project_id, external_ids)
        values = values.filter(named)
        listed = listed.filter(named)
    values = values.order_by("document_id", "attribute__position", "attribute_id").values_list(
        "document_id", "attribute__attribute_id", "output_data", "additional_text", "full_text_details"
    )
    for document_id, attribute_id, output_data, additional_text, details in values.iterator(chunk_size=5000):
        annotations.setdefault(document_id, {})[attribute_id] = GoldAnnotation(
            output_data=output_data,
            additional_text=additional_text or None,
            full_text_details=tuple(
                FullTextDetail(
                    text=detail["text"],
                    item_document_id=detail.get("item_document_id"),
                    item_arm=detail.get("item_arm"),
                )
                for detail in details
            ),
        )
    rows = listed.order_by("document__external_id").values_list(
        "document_id", "document__external_id", "document__name", "document__text"
    )
    return [
        GoldDocument(
            document_id=external_id,
            name=name or None,
            external_id=external_id,
            text=text or None,
            annotations=annotations.get(document_id, {}),
        )
        for document_id, external_id, name, text in rows.iterator(chunk_size=2000)
    ]
