"""Charts as SVG, drawn on the server from the numbers the page already holds.

Why hand-built SVG and not a charting library: see docs/ui.md, "Charts" (measured against Altair with
vl-convert and against vega-embed). Two shapes cover every chart of the pages:
- `interval_chart`: one row per item, a dot at the estimate and whiskers for its confidence interval
  (the leaderboard, the per-type or per-attribute breakdown, and the forest plot of paired deltas);
- `stacked_bar_chart`: one bar per item split into categories (match_status per attribute).

Colours come from the Okabe-Ito palette, which stays distinct under the common colour-vision
deficiencies, and nothing is told by colour alone: every estimate is also written as text, significance
is also a filled against a hollow marker, and the bar categories also differ by hatching and are named
in the legend and in each segment's tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from metrics.engine.attributes.types import MatchStatus
from web.formatting import number, with_interval

BLUE = "#0072B2"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
YELLOW = "#F0E442"
GREY = "#6b6b6b"
INK = "#1f2328"

ROW_HEIGHT = 26
LABEL_WIDTH = 260
VALUE_WIDTH = 330
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:12px"


@dataclass(frozen=True)
class IntervalPoint:
    """One row of an interval chart; `value` None draws a note instead of a dot."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    href: str = ""
    note: str = ""
    emphasised: bool = True


@dataclass(frozen=True)
class Category:
    """A bar segment kind: its name, fill colour and hatching (None: solid)."""

    name: str
    colour: str
    hatch: str | None = None


@dataclass(frozen=True)
class Bar:
    label: str
    counts: dict[str, int] = field(default_factory=dict)


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    raw = span / 4
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.ceil(low / step) * step
    ticks = []
    tick = start
    while tick <= high + step * 1e-9:
        ticks.append(round(tick, 10))
        tick += step
    return ticks


def _label(point_label: str, href: str, y: float) -> str:
    text = escape(point_label if len(point_label) <= 34 else point_label[:33] + "…")
    title = f"<title>{escape(point_label)}</title>"
    element = f'<text x="{LABEL_WIDTH - 8}" y="{y + 4}" text-anchor="end" fill="{INK}">{title}{text}</text>'
    if href:
        return f'<a href="{escape(href)}">{element}</a>'
    return element


def interval_chart(
    points: Sequence[IntervalPoint],
    *,
    title: str,
    domain: tuple[float, float] | None = (0.0, 1.0),
    reference: float | None = None,
    width: int = 1080,
    legend: str = "",
) -> SafeString:
    """Dots with confidence-interval whiskers, one row per point, on a shared horizontal axis.

    `domain` None fits the axis to the data (and to `reference`, kept in the middle); `reference`
    draws a vertical line (0 for a forest plot of deltas). A fitted axis of values inside [0, 1] stays
    inside it. `emphasised` False draws a hollow dot (e.g. not significant); `legend` is written
    under the axis only when some dot is hollow.
    """
    plot_left, plot_right = LABEL_WIDTH, width - VALUE_WIDTH
    top = 22
    height = top + ROW_HEIGHT * max(len(points), 1) + 34
    low, high = domain if domain is not None else _fitted_domain(points, reference)

    def x(value: float) -> float:
        clamped = min(max(value, low), high)
        return plot_left + (clamped - low) / (high - low) * (plot_right - plot_left)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'role="img" aria-label="{escape(title)}" style="{FONT};max-width:{width}px">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
    ]
    axis_y = top + ROW_HEIGHT * max(len(points), 1) + 4
    for tick in _ticks(low, high):
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top - 6}" y2="{axis_y}" stroke="#e6e6e6"/>')
        parts.append(
            f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle" fill="{GREY}">{number(tick)}</text>'
        )
    parts.append(f'<line x1="{plot_left}" x2="{plot_right}" y1="{axis_y}" y2="{axis_y}" stroke="{GREY}"/>')
    if reference is not None:
        rx = x(reference)
        parts.append(
            f'<line x1="{rx:.1f}" x2="{rx:.1f}" y1="{top - 10}" y2="{axis_y}" stroke="{INK}" '
            'stroke-dasharray="4 3"/>'
        )
    for index, point in enumerate(points):
        y = top + ROW_HEIGHT * index + ROW_HEIGHT / 2
        if index % 2 == 0:
            parts.append(
                f'<rect x="0" y="{y - ROW_HEIGHT / 2:.1f}" width="{width}" height="{ROW_HEIGHT}" fill="#f6f8fa"/>'
            )
        parts.extend(_interval_row(point, y, x, plot_right))
    if legend and any(not point.emphasised for point in points if point.value is not None):
        parts.append(f'<text x="{plot_left}" y="{height - 2}" fill="{GREY}">{escape(legend)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text inside was escaped above)


def _fitted_domain(points: Sequence[IntervalPoint], reference: float | None) -> tuple[float, float]:
    """An axis that holds every value and bound: centred on `reference` when given, else padded by a
    tenth, and kept inside [0, 1] (rounded to twentieths) when the values are."""
    known = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    if reference is not None:
        known.append(reference)
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    if reference is not None:
        reach = max(abs(low - reference), abs(high - reference)) or 1.0
        return reference - reach * 1.1, reference + reach * 1.1
    pad = (high - low) * 0.1 or 0.05
    low, high = low - pad, high + pad
    if low >= -pad and high <= 1 + pad:
        low, high = max(0.0, math.floor(low * 20) / 20), min(1.0, math.ceil(high * 20) / 20)
    return low, high


def _interval_row(
    point: IntervalPoint, y: float, x: Callable[[float], float], plot_right: float
) -> list[str]:
    """One point's row: its label, whisker, dot and the value written at the right, with a tooltip."""
    parts = [_label(point.label, point.href, y)]
    text = with_interval(point.value, point.low, point.high)
    if point.note:
        text = f"{text} {point.note}" if point.value is not None else point.note
    tooltip = f"<title>{escape(point.label)}: {escape(text)}</title>"
    parts.append(f"<g>{tooltip}")
    if point.value is not None:
        if point.low is not None and point.high is not None:
            x1, x2 = x(point.low), x(point.high)
            parts.append(
                f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{BLUE}" stroke-width="2"/>'
            )
            for cap in (x1, x2):
                parts.append(
                    f'<line x1="{cap:.1f}" x2="{cap:.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}" '
                    f'stroke="{BLUE}" stroke-width="2"/>'
                )
        fill = BLUE if point.emphasised else "#fff"
        parts.append(
            f'<circle cx="{x(point.value):.1f}" cy="{y:.1f}" r="5" fill="{fill}" stroke="{BLUE}" '
            'stroke-width="2"/>'
        )
    parts.append(
        f'<text x="{plot_right + 10}" y="{y + 4:.1f}" fill="{INK if point.value is not None else GREY}">'
        f"{escape(text)}</text></g>"
    )
    return parts


def _hatch_definitions(categories: Sequence[Category]) -> str:
    patterns = []
    for index, category in enumerate(categories):
        if category.hatch is None:
            continue
        lines = {
            "diagonal": '<path d="M-1,1 l2,-2 M0,8 l8,-8 M7,9 l2,-2" stroke="#000" stroke-width="1.2" '
            'stroke-opacity="0.55"/>',
            "cross": '<path d="M0,0 L8,8 M8,0 L0,8" stroke="#000" stroke-width="1" stroke-opacity="0.5"/>',
            "dots": '<circle cx="4" cy="4" r="1.4" fill="#000" fill-opacity="0.6"/>',
            "horizontal": '<path d="M0,4 L8,4" stroke="#000" stroke-width="1.2" stroke-opacity="0.55"/>',
        }[category.hatch]
        patterns.append(
            f'<pattern id="hatch-{index}" width="8" height="8" patternUnits="userSpaceOnUse">'
            f'<rect width="8" height="8" fill="{category.colour}"/>{lines}</pattern>'
        )
    return f"<defs>{''.join(patterns)}</defs>" if patterns else ""


def _fill(categories: Sequence[Category], index: int) -> str:
    category = categories[index]
    return f"url(#hatch-{index})" if category.hatch else category.colour


def stacked_bar_chart(
    bars: Sequence[Bar], *, categories: Sequence[Category], title: str, width: int = 1080
) -> SafeString:
    """One horizontal bar per item, split into `categories` by share; counts in tooltips and legend."""
    plot_left, plot_right = LABEL_WIDTH, width - 70
    top = 8
    legend_rows = math.ceil(len(categories) / 4)
    height = top + ROW_HEIGHT * max(len(bars), 1) + 10 + legend_rows * 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
        f'role="img" aria-label="{escape(title)}" style="{FONT};max-width:{width}px">',
        f"<title>{escape(title)}</title>",
        _hatch_definitions(categories),
    ]
    for index, bar in enumerate(bars):
        y = top + ROW_HEIGHT * index
        total = sum(bar.counts.values())
        parts.append(_label(bar.label, "", y + ROW_HEIGHT / 2))
        position = float(plot_left)
        for category_index, category in enumerate(categories):
            count = bar.counts.get(category.name, 0)
            if not count or not total:
                continue
            segment = count / total * (plot_right - plot_left)
            parts.append(
                f'<rect x="{position:.1f}" y="{y + 4}" width="{segment:.1f}" height="{ROW_HEIGHT - 8}" '
                f'fill="{_fill(categories, category_index)}" stroke="#fff" stroke-width="1">'
                f"<title>{escape(bar.label)}: {escape(category.name)} {count:,} of {total:,}</title></rect>"
            )
            position += segment
        parts.append(
            f'<text x="{plot_right + 8}" y="{y + ROW_HEIGHT / 2 + 4}" fill="{GREY}">n={total:,}</text>'
        )
    legend_top = top + ROW_HEIGHT * max(len(bars), 1) + 10
    column = (width - 20) / 4
    for index, category in enumerate(categories):
        lx = 10 + column * (index % 4)
        ly = legend_top + 20 * (index // 4)
        parts.append(
            f'<rect x="{lx:.1f}" y="{ly}" width="14" height="14" fill="{_fill(categories, index)}" '
            f'stroke="{GREY}" stroke-width="0.5"/>'
            f'<text x="{lx + 20:.1f}" y="{ly + 11}" fill="{INK}">{escape(category.name)}</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text inside was escaped above)


MATCH_STATUS_CATEGORIES = [
    Category(MatchStatus.EXACT_MATCH.value, GREEN),
    Category(MatchStatus.NEAR_MATCH.value, SKY),
    Category("correct (bool)", BLUE),
    Category("wrong (bool)", ORANGE, "cross"),
    Category(MatchStatus.EXTRACTION_ERROR_GOOD_SOURCE.value, VERMILLION, "diagonal"),
    Category(MatchStatus.EXTRACTION_ERROR_BAD_SOURCE.value, YELLOW, "dots"),
    Category(MatchStatus.MISSING_PREDICTION.value, "#bdbdbd", "horizontal"),
    Category(MatchStatus.INVALID_GOLD.value, PURPLE, "cross"),
]
