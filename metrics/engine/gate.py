"""Quality gate: hold a run's metrics document against a threshold file (docs/ci.md), pass or fail.

A check with `attribute` reads the metrics.json entry of that `attribute_id`, compared as text (5001
and "5001" name the same attribute); one without reads a dotted path into results.json, and its
interval beside it at `<path>_ci`. Whatever is missing or null fails the check with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from metrics.engine.attributes.metrics import metric_column_order
from metrics.engine.attributes.types import AttributeType
from metrics.engine.text_table import text_table

ON_VALUES = ("estimate", "lower_bound", "upper_bound")
DIRECTIONS = ("higher", "lower")
_FIELDS = {"metric", "attribute", "min", "max", "on", "baseline", "margin", "direction"}
_BOUND_KEYS = {"lower_bound": "low", "upper_bound": "high"}


class ThresholdFileError(ValueError):
    """The threshold file is malformed; `problems` lists each one with its check index and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid threshold file: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class Check:
    """One validated check: the value must be at least (`at_least`) or at most its threshold, which is
    `limit` (a min or max), or else the `baseline` run's estimate minus or plus `margin`."""

    index: int
    metric: str
    at_least: bool
    on: str = "estimate"
    attribute: str | None = None
    limit: float | None = None
    baseline: str | None = None
    margin: float = 0.0


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one check. `threshold` is the value observed is held to (for a baseline check:
    the baseline estimate minus or plus the margin), None when it could not be read."""

    index: int
    metric: str
    attribute: str | None
    on: str
    comparison: str  # ">=" or "<="
    threshold: float | None
    observed: float | None
    passed: bool
    reason: str
    baseline: str | None = None


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    checks: list[CheckResult]

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [asdict(check) for check in self.checks]}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_checks(data: Any) -> list[Check]:
    """Validate a parsed threshold file; raise ThresholdFileError naming every problem
    (`checks[2].min: must be a number`)."""
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        raise ThresholdFileError(['the file must be an object with a "checks" list'])
    unknown_top = sorted(set(data) - {"checks"})
    problems = [f"unknown top-level field {name!r}" for name in unknown_top]
    if not data["checks"]:
        problems.append("checks: the list is empty; a gate needs at least one check")
    checks: list[Check] = []
    for index, raw in enumerate(data["checks"]):
        check, found = _parse_check(index, raw)
        problems.extend(found)
        if check is not None:
            checks.append(check)
    if problems:
        raise ThresholdFileError(problems)
    return checks


def _parse_check(index: int, raw: Any) -> tuple[Check | None, list[str]]:
    where = f"checks[{index}]"
    if not isinstance(raw, dict):
        return None, [f"{where}: must be an object"]
    problems = [f"{where}.{name}: unknown field" for name in sorted(set(raw) - _FIELDS)]
    metric = raw.get("metric")
    if not isinstance(metric, str) or not metric.strip():
        problems.append(f"{where}.metric: required, a non-empty string")
    attribute = raw.get("attribute")
    if attribute is not None and (isinstance(attribute, bool) or not isinstance(attribute, (str, int))):
        problems.append(f"{where}.attribute: must be an attribute id (a string or an integer)")
    on = raw.get("on", "estimate")
    if on not in ON_VALUES:
        problems.append(f"{where}.on: must be one of {', '.join(ON_VALUES)}, got {on!r}")
    kinds = [kind for kind in ("min", "max", "baseline") if kind in raw]
    if len(kinds) != 1:
        problems.append(
            f"{where}: needs exactly one of min, max, baseline (found {', '.join(kinds) or 'none'})"
        )
    for bound in ("min", "max"):
        if bound in raw and not _is_number(raw[bound]):
            problems.append(f"{where}.{bound}: must be a number")
    if "baseline" in raw and (not isinstance(raw["baseline"], str) or not raw["baseline"].strip()):
        problems.append(f"{where}.baseline: must be a run id (a non-empty string)")
    for name in ("margin", "direction"):
        if name in raw and "baseline" not in raw:
            problems.append(f"{where}.{name}: only applies to a baseline check")
    margin = raw.get("margin", 0.0)
    if not _is_number(margin) or margin < 0:
        problems.append(f"{where}.margin: must be a number >= 0")
    direction = raw.get("direction", "higher")
    if direction not in DIRECTIONS:
        problems.append(f"{where}.direction: must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if problems:
        return None, problems
    kind = kinds[0]
    return Check(
        index=index,
        metric=metric.strip(),
        at_least=kind == "min" or (kind == "baseline" and direction == "higher"),
        on=on,
        attribute=None if attribute is None else str(attribute),
        limit=float(raw[kind]) if kind in ("min", "max") else None,
        baseline=raw.get("baseline"),
        margin=float(margin),
    ), []


class _Unreadable(Exception):
    """A value the gate needs is missing or null; the message is the check's reason."""


def _dotted(document: Mapping[str, Any], path: str) -> Any:
    node: Any = document
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            raise _Unreadable(f"{path} is missing from the metrics document")
        node = node[key]
    return node


def unknown_metrics(checks: list[Check], document: Mapping[str, Any]) -> list[str]:
    """The checks naming a metric that `document` cannot have, each as a problem naming the check.

    A span check names a dotted path into results.json, which holds every metric (null where it is
    undefined), so a path that is not there is a typo or the wrong kind of run. An attribute check
    names a metric of the extraction metrics, which metrics.json omits where null, so it is unknown
    only when no attribute type has it and no attribute of the document carries it (custom metrics).
    """
    attribute_metrics = set(metric_column_order(list(AttributeType), ()))
    for entry in document.get("attributes") or []:
        if isinstance(entry, Mapping):
            attribute_metrics.update(entry.get("metrics") or {})
    return [
        f"checks[{check.index}].metric: unknown metric {check.metric!r} for this document"
        for check in checks
        if not (
            _has_path(document, check.metric)
            if check.attribute is None
            else check.metric in attribute_metrics
        )
    ]


def _has_path(document: Mapping[str, Any], path: str) -> bool:
    try:
        _dotted(document, path)
    except _Unreadable:
        return False
    return True


def _attribute_entry(document: Mapping[str, Any], attribute: str) -> Mapping[str, Any]:
    for entry in document.get("attributes") or []:
        if isinstance(entry, Mapping) and str(entry.get("attribute_id")) == attribute:
            return entry
    raise _Unreadable(f"attribute {attribute} is not in the metrics document")


def read_value(document: Mapping[str, Any], metric: str, attribute: str | None, on: str) -> float:
    """The observed value of a check: the estimate, or the named bound of its interval.

    The estimate must be there and be a number even when a bound is checked: a bound of a metric that
    was not computed means nothing. Raises _Unreadable with the reason for whatever is missing or null.
    """
    label = metric if attribute is None else f"{metric} of attribute {attribute}"
    if attribute is None:
        value = _dotted(document, metric)
        interval = _dotted(document, f"{metric}_ci") if on != "estimate" else None
    else:
        entry = _attribute_entry(document, attribute)
        metrics = entry.get("metrics") or {}
        if metric not in metrics:
            raise _Unreadable(f"{label} is missing (metrics.json omits null metrics)")
        value = metrics[metric]
        interval = (entry.get("intervals") or {}).get(metric)
    _require_number(value, label)
    if on == "estimate":
        return float(value)
    if not isinstance(interval, Mapping):
        raise _Unreadable(f"{label} has no interval")
    bound = interval.get(_BOUND_KEYS[on])
    _require_number(bound, f"the {on.replace('_', ' ')} of {label}")
    return float(bound)


def _require_number(value: Any, label: str) -> None:
    if value is None:
        raise _Unreadable(f"{label} is null")
    if not _is_number(value):
        raise _Unreadable(f"{label} is not a finite number ({value!r})")


def evaluate_gate(
    checks: list[Check],
    document: Mapping[str, Any],
    baselines: Mapping[str, Mapping[str, Any]] | None = None,
) -> GateResult:
    """Run every check against the candidate's metrics `document`; `baselines`: {run id: metrics
    document} of the runs that non-inferiority checks name."""
    results = [_run_check(check, document, baselines or {}) for check in checks]
    return GateResult(passed=all(result.passed for result in results), checks=results)


def _threshold(check: Check, baselines: Mapping[str, Mapping[str, Any]]) -> float:
    """The limit of a min or max check; for a baseline check the baseline's estimate -/+ the margin."""
    if check.limit is not None:
        return check.limit
    if check.baseline not in baselines:
        raise _Unreadable(f"baseline run {check.baseline} was not supplied")
    reference = read_value(baselines[check.baseline], check.metric, check.attribute, "estimate")
    return reference - check.margin if check.at_least else reference + check.margin


def _run_check(
    check: Check, document: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]]
) -> CheckResult:
    comparison = ">=" if check.at_least else "<="
    outcome = partial(
        CheckResult, check.index, check.metric, check.attribute, check.on, comparison, baseline=check.baseline
    )
    try:
        threshold = _threshold(check, baselines)
    except _Unreadable as problem:
        return outcome(None, None, False, f"baseline: {problem}")
    try:
        observed = read_value(document, check.metric, check.attribute, check.on)
    except _Unreadable as problem:
        return outcome(threshold, None, False, str(problem))
    passed = observed >= threshold if check.at_least else observed <= threshold
    verdict = "meets" if passed else "does not meet"
    return outcome(threshold, observed, passed, f"{observed:.6g} {verdict} {comparison} {threshold:.6g}")


def render_gate_table(gate: GateResult) -> str:
    """A plain-text table of the checks, one line each, and the overall verdict."""
    header = ("#", "metric", "attribute", "on", "threshold", "observed", "result", "reason")
    rows = [header]
    for check in gate.checks:
        threshold = "" if check.threshold is None else f"{check.comparison} {check.threshold:.6g}"
        if check.baseline is not None:
            threshold = f"{threshold} (baseline {check.baseline})".strip()
        rows.append(
            (
                str(check.index),
                check.metric,
                check.attribute or "",
                check.on,
                threshold,
                "" if check.observed is None else f"{check.observed:.6g}",
                "PASS" if check.passed else "FAIL",
                check.reason,
            )
        )
    lines = text_table(rows)
    passed = sum(check.passed for check in gate.checks)
    verdict = "PASSED" if gate.passed else "FAILED"
    lines.append(f"\nGate {verdict}: {passed} of {len(gate.checks)} checks passed.")
    return "\n".join(lines)
