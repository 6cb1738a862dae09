"""JSON read fast (orjson) where that changes nothing, and by json everywhere else.

Every JSON reader of the importers goes through `parse_json_bytes`: orjson parses about twice as fast
as json, but accepts and reads a few inputs differently, so those take json's path and every value,
accepted input and error message stays what json gives.
"""

from __future__ import annotations

from typing import Any

import orjson

# Every byte as b"0" when it is an ASCII digit, b" " otherwise: a run of 19 zeros in the translated
# bytes is a run of 19 digits in the original.
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19
# Large inputs are scanned a slice at a time, so the scan's translated copy stays small (a whole
# export translated at once was tens of MB beside the export and its parsed objects).
SCAN_SLICE = 1 << 20
# What `parse_json_bytes` returns when json.loads must read the bytes instead.
NOT_PARSED = object()


def parse_json_bytes(data: bytes) -> Any:
    """`json.loads(data.decode("utf-8"))`, read by orjson (about twice as fast), or NOT_PARSED.

    Where orjson's answer could differ from json's, or orjson fails, the caller reads the bytes with
    json as before, so accepted inputs, values and error messages stay exactly json's:
    - orjson rejects what json accepts (NaN, Infinity, numbers beyond the float range, escaped lone
      surrogates) and words its errors its own way: NOT_PARSED on any orjson error;
    - orjson reads an integer beyond 64 bits as a float where json keeps the int: NOT_PARSED when the
      bytes hold a run of 19 digits anywhere (every integer of up to 18 digits fits in 64 bits;
      a run inside a string or a long fraction sends the bytes to json needlessly, never wrongly).
    Otherwise the two agree (checked value by value on floats, integers, every code point, escapes,
    duplicate keys and malformed input). A byte order mark is an orjson error, so it goes to json too.
    """
    if _has_nineteen_digits(data):
        return NOT_PARSED
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return NOT_PARSED


def _has_nineteen_digits(data: bytes) -> bool:
    """True when `data` holds a run of 19 ASCII digits."""
    if len(data) <= SCAN_SLICE:  # a line: at once, without a slice's copy
        return _NINETEEN_DIGITS in data.translate(_DIGITS_AS_ZEROS)
    overlap = len(_NINETEEN_DIGITS) - 1  # a run across two slices is seen whole in the second
    for start in range(0, max(len(data), 1), SCAN_SLICE):
        if _NINETEEN_DIGITS in data[max(start - overlap, 0) : start + SCAN_SLICE].translate(_DIGITS_AS_ZEROS):
            return True
    return False
