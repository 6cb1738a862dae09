"""`parse_json_bytes`: orjson where its answer is json's, NOT_PARSED (json's turn) everywhere else."""

from __future__ import annotations

import json

import pytest

from annotations.importers import json_lines
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes

SLICE = json_lines.SCAN_SLICE


def padded(length: int, run_at: int, run: bytes) -> bytes:
    """A JSON string of `length` bytes holding `run` at `run_at`."""
    body = bytearray(b"x" * (length - 2))
    body[run_at : run_at + len(run)] = run
    return b'"' + bytes(body) + b'"'


@pytest.mark.parametrize("run_at", [0, SLICE - 30, SLICE - 10, SLICE - 1, SLICE + 5, 2 * SLICE - 7])
def test_a_run_of_19_digits_is_seen_wherever_it_lies_even_across_scan_slices(run_at):
    data = padded(3 * SLICE, run_at, b"1" * 19)
    assert parse_json_bytes(data) is NOT_PARSED


@pytest.mark.parametrize("run_at", [0, SLICE - 10, SLICE - 1, 2 * SLICE - 7])
def test_runs_of_18_digits_are_read_by_orjson(run_at):
    data = padded(3 * SLICE, run_at, b"1" * 18)
    assert parse_json_bytes(data) == json.loads(data)


def test_an_integer_beyond_64_bits_keeps_every_digit():
    assert parse_json_bytes(b'{"n": 12345678901234567890}') is NOT_PARSED
    assert parse_json_bytes(b'{"n": 123456789012345678}') == {"n": 123456789012345678}


def test_what_orjson_refuses_goes_to_json():
    assert parse_json_bytes(b'{"n": NaN}') is NOT_PARSED
    assert parse_json_bytes(b"\xef\xbb\xbf{}") is NOT_PARSED
    assert parse_json_bytes(b"") is NOT_PARSED
