"""Template filters over web.formatting, so templates format numbers one way."""

from __future__ import annotations

from django import template

from web import formatting

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
    """A Headline (value, low, high) or a MetricValue (value, ci_low, ci_high) as "0.86 [0.84, 0.88]"."""
    if metric is None:
        return "–"
    low = getattr(metric, "low", getattr(metric, "ci_low", None))
    high = getattr(metric, "high", getattr(metric, "ci_high", None))
    return formatting.with_interval(metric.value, low, high)


@register.filter
def get_item(mapping, key):
    return mapping.get(key) if mapping else None
