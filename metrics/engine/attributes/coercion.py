"""Strict coercion of raw gold and predicted values to an attribute's type (docs/semantics.md section 2).

Gold and predictions go through the same rules. A value that does not coerce raises
`CoercionError`; the caller decides what that means (an invalid gold value, or a missing prediction).
Nothing is ever turned into 0 or True by default.
"""

from __future__ import annotations

import math
import re
from typing import Any

from metrics.engine.attributes.types import AttributeType

NUMBER_FORMATS: tuple[str, ...] = ("en", "de")

_BOOL_WORDS: dict[str, bool] = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}

# A whole value written in a number format: a sign, an integer part (plain digits, or digits grouped
# in threes by the thousands separator) with an optional decimal part, or a decimal part alone (a
# leading-dot decimal, `.35` or `-.5`, as papers write `p < .05`), and an optional exponent.
_NUMBER_PATTERNS: dict[str, re.Pattern[str]] = {
    "en": re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?"),
    "de": re.compile(r"[+-]?(?:(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?|,\d+)(?:[eE][+-]?\d+)?"),
}
_THOUSANDS_SEPARATOR = {"en": ",", "de": "."}
_DECIMAL_SEPARATOR = {"en": ".", "de": ","}


class CoercionError(ValueError):
    """A raw value that does not coerce to the attribute's type; the message says why."""


def check_number_format(number_format: str) -> None:
    if number_format not in NUMBER_FORMATS:
        raise ValueError(
            f"unknown number format {number_format!r}; expected one of {', '.join(NUMBER_FORMATS)}"
        )


def parse_number_text(text: str, number_format: str) -> float | int | None:
    """One whole number written in `number_format` (docs/semantics.md section 2; "0,45" is none under
    `en`), else None. Thousands separators group digits in threes; integers stay int, keeping precision."""
    if text.isdecimal():
        # Plain digits read the same in every format; the common case skips the pattern.
        return int(text)
    if _NUMBER_PATTERNS[number_format].fullmatch(text) is None:
        return None
    plain = text.replace(_THOUSANDS_SEPARATOR[number_format], "").replace(
        _DECIMAL_SEPARATOR[number_format], "."
    )
    if "." in plain or "e" in plain or "E" in plain:
        return float(plain)
    return int(plain)


def coerce_bool(raw: Any) -> bool:
    """JSON booleans, the integers 0 and 1, and true/false/yes/no/1/0 in any case; nothing else."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        word = _BOOL_WORDS.get(raw.strip().lower())
        if word is not None:
            return word
    raise CoercionError(f"not a boolean (expected true/false/yes/no/1/0): {raw!r}")


def _coerce_number(raw: Any, number_format: str, integer: bool) -> int | float:
    """INTEGER: a JSON integer, an integral JSON number (12.0), or text read in the number format.
    FLOAT: a JSON number, or such text."""
    if isinstance(raw, bool):
        # bool is an int subclass in Python; a True for a number is a type error, not 1.
        raise CoercionError(f"not a number: {raw!r}")
    if isinstance(raw, int | float):
        value: int | float = raw
    elif isinstance(raw, str):
        parsed = parse_number_text(raw.strip(), number_format)
        if parsed is None:
            raise CoercionError(f"not a number in the {number_format!r} number format: {raw!r}")
        value = parsed
    else:
        raise CoercionError(f"not a number: {raw!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise CoercionError(f"not a finite number: {raw!r}")
    if not integer:
        return float(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise CoercionError(f"not an integer: {raw!r}")
        return int(value)
    return value


def coerce_string(raw: Any) -> str:
    """Text as given. A JSON number is accepted as its decimal text; booleans, lists, objects are not."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)
    raise CoercionError(f"not a string: {raw!r}")


def coerce_value(raw: Any, attribute_type: AttributeType, number_format: str) -> Any:
    """Coerce `raw` to `attribute_type`; None stays None (a null value); raise CoercionError otherwise."""
    if raw is None:
        return None
    if attribute_type is AttributeType.BOOL:
        return coerce_bool(raw)
    if attribute_type is AttributeType.STRING:
        return coerce_string(raw)
    if attribute_type is AttributeType.INTEGER or attribute_type is AttributeType.FLOAT:
        return _coerce_number(raw, number_format, attribute_type is AttributeType.INTEGER)
    if attribute_type is AttributeType.LIST:
        if isinstance(raw, list | tuple):
            return list(raw)
        raise CoercionError(f"not a list: {raw!r}")
    if isinstance(raw, dict):
        return dict(raw)
    raise CoercionError(f"not an object: {raw!r}")
