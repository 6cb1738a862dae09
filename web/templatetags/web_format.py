"""Template filters over web.formatting, so templates format numbers one way."""

from __future__ import annotations

from django import template

from web import formatting
from web.headlines import METRIC_LABELS

register = template.Library()


@register.filter
def number(value, digits: int = 2) -> str:
    return formatting.number(value, int(digits))


@register.filter
def count(value) -> str:
    """A count stored as a float metric value (10.0) as the whole number it is."""
    if value is None:
        return "–"
    return f"{int(value):,}"


@register.filter
def p_value(value) -> str:
    return formatting.p_value(value)


@register.filter
def money(value) -> str:
    return formatting.money(value)


@register.filter
def interval(metric) -> str:
    """A Headline (value, low, high), a MetricValue (value, ci_low, ci_high) or an API answer's dict
    (`value`, `ci_low`, `ci_high`) as "0.86 [0.84, 0.88]"."""
    if metric is None:
        return "–"
    if isinstance(metric, dict):
        return formatting.with_interval(metric.get("value"), metric.get("ci_low"), metric.get("ci_high"))
    low = getattr(metric, "low", getattr(metric, "ci_low", None))
    high = getattr(metric, "high", getattr(metric, "ci_high", None))
    return formatting.with_interval(metric.value, low, high)


@register.filter
def with_ci(figures: dict | None, name: str) -> str:
    """`figures[name]` with its interval `figures[name + "_ci"]` (`low`, `high`), as the agreement
    result writes them: "0.91 [0.89, 0.93]"."""
    if not figures:
        return "–"
    ci = figures.get(f"{name}_ci") or {}
    return formatting.with_interval(figures.get(name), ci.get("low"), ci.get("high"))


@register.filter
def delta(paired: dict | None) -> str:
    """A paired difference (`delta`, `ci_low`, `ci_high`) with its sign: "-0.05 [-0.08, -0.02]"."""
    if not paired or paired.get("delta") is None:
        return "–"
    return formatting.with_interval(paired["delta"], paired.get("ci_low"), paired.get("ci_high"), signed=True)


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None


@register.filter
def metric_label(name: str) -> str:
    """A stored metric's name as the pages call it ("micro.chars.all.f1" -> "character F1")."""
    return METRIC_LABELS.get(name, name)
