"""What changed between two gold versions of a project (docs/agreement.md, "The history of the gold").

Documents differ by gold hash; within one, spans are compared as multisets of (start, end,
entity_type), and a span with the bounds of a removed one but another type is `changed` (from, to);
attribute values are compared by attribute (`output_data`, `additional_text`, citation).
Held-back documents are left out entirely, documents and counts: no one may learn anything of their
gold. It lives in `metrics` because that rule lives in `experiments` (annotations may not import it).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import QuerySet

from annotations.models import (
    Document,
    GoldAttributeValue,
    GoldKind,
    GoldSpan,
    GoldVersion,
    GoldVersionDocument,
)
from experiments.splits import split_exclude_hidden

CHUNK = 1000
VALUE_FIELDS = ("output_data", "additional_text", "citation_page", "citation_highlight_text")


def gold_diff_documents(
    *, version_a: GoldVersion, version_b: GoldVersion
) -> tuple[QuerySet[Document], dict[int, str]]:
    """The documents that differ (a queryset ordered by id, for paging) and each one's status."""
    hashes_a, hashes_b = (
        dict(
            GoldVersionDocument.objects.filter(gold_version=version).values_list(
                "document_id", "content_hash"
            )
        )
        for version in (version_a, version_b)
    )
    status = {}
    for document_id in hashes_a.keys() | hashes_b.keys():
        if document_id not in hashes_a:
            status[document_id] = "added"
        elif document_id not in hashes_b:
            status[document_id] = "removed"
        elif hashes_a[document_id] != hashes_b[document_id]:
            status[document_id] = "changed"
    documents = split_exclude_hidden(
        Document.objects.filter(pk__in=list(status)), project=version_a.project, document_field="pk"
    ).order_by("id")
    return documents, status


def _span_rows(version: GoldVersion, document_ids: list[int]) -> dict[int, list[tuple[int, int, str]]]:
    rows: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for document_id, start, end, entity_type in GoldSpan.objects.filter(
        gold_version=version, document_id__in=document_ids
    ).values_list("document_id", "start", "end", "entity_type"):
        rows[document_id].append((start, end, entity_type))
    return rows


def _value_rows(version: GoldVersion, document_ids: list[int]) -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = defaultdict(dict)
    for document_id, attribute_id, *fields in GoldAttributeValue.objects.filter(
        gold_version=version, document_id__in=document_ids
    ).values_list("document_id", "attribute__attribute_id", *VALUE_FIELDS):
        rows[document_id][attribute_id] = dict(zip(VALUE_FIELDS, fields, strict=True))
    return rows


def span_changes(
    before: list[tuple[int, int, str]], after: list[tuple[int, int, str]]
) -> dict[str, list[dict]]:
    """added, removed and changed (same bounds, another type) spans between two lists of one document."""
    removed = Counter(before) - Counter(after)
    added = Counter(after) - Counter(before)
    changed = []
    removed_by_bounds: dict[tuple[int, int], list[str]] = defaultdict(list)
    for (start, end, entity_type), count in sorted(removed.items()):
        removed_by_bounds[(start, end)].extend([entity_type] * count)
    added_left = []
    for (start, end, entity_type), count in sorted(added.items()):
        for _ in range(count):
            olds = removed_by_bounds.get((start, end))
            if olds:
                changed.append({"start": start, "end": end, "from": olds.pop(0), "to": entity_type})
            else:
                added_left.append({"start": start, "end": end, "entity_type": entity_type})
    removed_left = [
        {"start": start, "end": end, "entity_type": entity_type}
        for (start, end), types in sorted(removed_by_bounds.items())
        for entity_type in types
    ]
    return {"spans_added": added_left, "spans_removed": removed_left, "spans_changed": changed}


def value_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[dict]]:
    """added, removed and changed attribute values between two versions of one document."""
    return {
        "values_added": [{"attribute_id": key, **after[key]} for key in sorted(after.keys() - before.keys())],
        "values_removed": [
            {"attribute_id": key, **before[key]} for key in sorted(before.keys() - after.keys())
        ],
        "values_changed": [
            {"attribute_id": key, "from": before[key], "to": after[key]}
            for key in sorted(before.keys() & after.keys())
            if before[key] != after[key]
        ],
    }


def gold_diff_entries(
    *, version_a: GoldVersion, version_b: GoldVersion, documents: Iterable[Document], status: dict[int, str]
) -> Iterator[dict[str, Any]]:
    """One entry per document: its id, status and the changes within it."""
    documents = list(documents)
    spans = version_a.kind == GoldKind.SPANS
    rows, changes = (_span_rows, span_changes) if spans else (_value_rows, value_changes)
    for start in range(0, len(documents), CHUNK):
        chunk = documents[start : start + CHUNK]
        ids = [document.pk for document in chunk]
        before, after = rows(version_a, ids), rows(version_b, ids)
        for document in chunk:
            changes_of_document = changes(before[document.pk], after[document.pk])
            yield {"document_id": document.external_id, "status": status[document.pk], **changes_of_document}


def gold_diff_summary(
    *, version_a: GoldVersion, version_b: GoldVersion, documents: QuerySet[Document], status: dict[int, str]
) -> dict[str, Any]:
    """Counts of documents by status and of spans (per type) or values (per attribute) by change."""
    summary: dict[str, Any] = {"documents_added": 0, "documents_removed": 0, "documents_changed": 0}
    per_key: dict[str, Counter] = defaultdict(Counter)
    entries = gold_diff_entries(
        version_a=version_a, version_b=version_b, documents=documents.only("pk", "external_id"), status=status
    )
    spans = version_a.kind == GoldKind.SPANS
    for entry in entries:
        summary[f"documents_{entry['status']}"] += 1
        for change in ("added", "removed", "changed"):
            # A span counts under its type; a changed one under its new type.
            key = ("to" if change == "changed" else "entity_type") if spans else "attribute_id"
            for item in entry[f"{'spans' if spans else 'values'}_{change}"]:
                per_key[item[key]][change] += 1
    name = "per_type" if spans else "per_attribute"
    summary[name] = {
        key: {change: counts.get(change, 0) for change in ("added", "removed", "changed")}
        for key, counts in sorted(per_key.items())
    }
    return summary
