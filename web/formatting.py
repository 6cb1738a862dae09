"""How numbers read on the pages: an estimate with its interval as "0.86 [0.84, 0.88]"."""

from __future__ import annotations

import math


def number(value: float | int | None, digits: int = 2, *, signed: bool = False) -> str:
    """A metric for reading; blank values are an en dash, never a misleading 0. `signed`: a difference,
    written with its sign ("+0.05", "−0.05")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    shown = f"{value:.{digits}f}"
    # -0.004 rounds to "-0.00": a sign on zero suggests a direction the number does not have.
    if float(shown) == 0:
        return shown.lstrip("-")
    if signed and not shown.startswith("-"):
        return "+" + shown
    return shown


def with_interval(
    value: float | None, low: float | None, high: float | None, digits: int = 2, *, signed: bool = False
) -> str:
    """ "0.86 [0.84, 0.88]"; the interval is left out when there is none."""
    if value is None:
        return "–"
    if low is None or high is None:
        return number(value, digits, signed=signed)
    return (
        f"{number(value, digits, signed=signed)} "
        f"[{number(low, digits, signed=signed)}, {number(high, digits, signed=signed)}]"
    )


def p_value(value: float | None) -> str:
    if value is None:
        return "–"
    if value < 0.001:
        return "<0.001"
    return f"{value:.3f}"


def money(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
