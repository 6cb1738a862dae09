"""Comparing two scored runs of one project on one gold version: metric deltas and changed rows.

Built as a list of metric entries (`scope`, `scope_key`, `name`, `a`, `b`, `delta`) so that
uncertainty (a confidence interval of the delta, a paired test's p-value) can be added to each entry
without changing the shape of the answer.
"""

from __future__ import annotations

from typing import Any

from annotations.models import Attribute, Document
from experiments.models import ExperimentRun, RunKind
from metrics.errors import ComparisonNotPossible
from metrics.models import ComparisonRow, MetricValue, Scoring

CHANGED_ROWS_SHOWN = 1000


def _row_keys(scoring: Scoring, kind: str) -> dict[tuple, tuple[str, int, int | None]]:
    """key -> (match_status, document pk, attribute pk) of every row of a scoring."""
    rows = ComparisonRow.objects.filter(scoring=scoring)
    result: dict[tuple, tuple[str, int, int | None]] = {}
    if kind == RunKind.ATTRIBUTES:
        for document_id, attribute_id, status in rows.values_list(
            "document_id", "attribute_id", "match_status"
        ).iterator(chunk_size=10000):
            result[(document_id, attribute_id)] = (status, document_id, attribute_id)
        return result
    values = rows.values_list(
        "document_id", "entity_type", "match_status", "columns__side", "columns__start", "columns__end"
    )
    for document_id, entity_type, status, side, start, end in values.iterator(chunk_size=10000):
        result[(document_id, side, start, end, entity_type)] = (status, document_id, None)
    return result


def runs_compare(
    *,
    run_a: ExperimentRun,
    scoring_a: Scoring,
    run_b: ExperimentRun,
    scoring_b: Scoring,
    changed_limit: int = CHANGED_ROWS_SHOWN,
) -> dict[str, Any]:
    """Deltas b - a of every metric both scorings have, and the rows whose match status (or span outcome)
    changed. Raises ComparisonNotPossible when the runs do not share project, kind and gold version."""
    if run_a.project_id != run_b.project_id:
        raise ComparisonNotPossible("The two runs belong to different projects.", code="different_projects")
    if run_a.kind != run_b.kind:
        raise ComparisonNotPossible(
            f"Run {run_a.pk} is a {run_a.kind} run and run {run_b.pk} a {run_b.kind} run.",
            code="different_kinds",
        )
    if scoring_a.gold_version_id != scoring_b.gold_version_id:
        raise ComparisonNotPossible(
            f"Run {run_a.pk} was scored on gold version {scoring_a.gold_version.number} and run {run_b.pk} on "
            f"{scoring_b.gold_version.number}: rescore one of them on the same gold first.",
            details={
                "gold_version_a": scoring_a.gold_version.number,
                "gold_version_b": scoring_b.gold_version.number,
            },
            code="different_gold_versions",
        )
    values_a = {
        (v.scope, v.scope_key, v.name): v
        for v in MetricValue.objects.filter(scoring=scoring_a).order_by("scope", "scope_key", "name")
    }
    values_b = {(v.scope, v.scope_key, v.name): v for v in MetricValue.objects.filter(scoring=scoring_b)}
    metrics = []
    for key, a in values_a.items():
        b = values_b.get(key)
        if b is None:
            continue
        delta = None if a.value is None or b.value is None else b.value - a.value
        metrics.append(
            {
                "scope": key[0],
                "scope_key": key[1],
                "name": key[2],
                "a": a.value,
                "b": b.value,
                "delta": delta,
                "n_a": a.n,
                "n_b": b.n,
            }
        )

    rows_a = _row_keys(scoring_a, run_a.kind)
    rows_b = _row_keys(scoring_b, run_b.kind)
    changed_keys = sorted(
        (
            key
            for key in rows_a.keys() | rows_b.keys()
            if rows_a.get(key, (None,))[0] != rows_b.get(key, (None,))[0]
        ),
        key=lambda key: tuple("" if part is None else part for part in key),
    )
    shown = changed_keys[:changed_limit]
    document_pks = {(rows_a.get(key) or rows_b.get(key))[1] for key in shown}
    attribute_pks = {(rows_a.get(key) or rows_b.get(key))[2] for key in shown} - {None}
    external_ids = dict(Document.objects.filter(pk__in=document_pks).values_list("pk", "external_id"))
    attribute_ids = dict(Attribute.objects.filter(pk__in=attribute_pks).values_list("pk", "attribute_id"))
    changed = []
    for key in shown:
        entry: dict[str, Any] = {"document_id": external_ids[key[0]]}
        if run_a.kind == RunKind.ATTRIBUTES:
            entry["attribute_id"] = attribute_ids.get(key[1])
        else:
            entry.update(side=key[1], start=key[2], end=key[3], entity_type=key[4])
        entry["a"] = rows_a.get(key, (None,))[0]
        entry["b"] = rows_b.get(key, (None,))[0]
        changed.append(entry)

    def describe(run: ExperimentRun, scoring: Scoring) -> dict[str, Any]:
        return {"run": run.pk, "name": run.name, "scoring": scoring.number, "config_hash": run.config_hash}

    return {
        "kind": run_a.kind,
        "gold_version": scoring_a.gold_version.number,
        "a": describe(run_a, scoring_a),
        "b": describe(run_b, scoring_b),
        "metrics": metrics,
        "changed_rows": changed,
        "changed_rows_total": len(changed_keys),
        "changed_rows_truncated": len(changed_keys) > len(shown),
    }
