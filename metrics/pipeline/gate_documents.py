"""Where a quality gate's metrics documents (results.json, metrics.json) come from: files or the
server's API. Every problem is a `GateInputError` naming the file (and line) or the URL, so
`manage.py gate` can stop with exit status 2 and say what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from metrics.engine.gate import Check, ThresholdFileError, parse_checks

TIMEOUT_SECONDS = 30.0


class GateInputError(ValueError):
    """A threshold file, metrics file or server answer the gate cannot use."""


def read_threshold_file(path: Path) -> list[Check]:
    """The validated checks of a threshold file; GateInputError naming the file and every problem."""
    try:
        return parse_checks(json.loads(_read_text(path)))
    except json.JSONDecodeError as error:
        problem = f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
    except ThresholdFileError as error:
        problem = "; ".join(error.problems)
    raise GateInputError(f"{path}: {problem}")


def read_metrics_file(path: Path) -> dict[str, Any]:
    """A results.json or metrics.json file; GateInputError naming the file and line of a problem."""
    text = _read_text(path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise GateInputError(f"{path}, line {error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(document, dict):
        raise GateInputError(f"{path}, line 1: a metrics document must be a JSON object")
    return document


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, IsADirectoryError, PermissionError) as error:
        raise GateInputError(f"{path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise GateInputError(f"{path}: the file is not valid UTF-8") from None


def parse_baseline_options(values: Iterable[str]) -> dict[str, Path]:
    """`--baseline ID=FILE` values as {run id: file}; GateInputError on a value without `=`."""
    baselines: dict[str, Path] = {}
    for value in values:
        run_id, separator, file = value.partition("=")
        if not separator or not run_id.strip() or not file.strip():
            raise GateInputError(f"--baseline {value!r}: expected RUN_ID=FILE")
        baselines[run_id.strip()] = Path(file.strip())
    return baselines


def baseline_ids(checks: Iterable[Check]) -> list[str]:
    """The baseline runs the checks name, in order of first mention."""
    return list(dict.fromkeys(check.baseline for check in checks if check.baseline is not None))


def fetch_run_metrics(
    server: str, run_id: str, token: str, *, transport: httpx.BaseTransport | None = None
) -> dict[str, Any]:
    """`GET {server}/api/v1/runs/{run_id}/metrics/` with the token; GateInputError on any failure."""
    url = f"{server.rstrip('/')}/api/v1/runs/{run_id}/metrics/"
    try:
        with httpx.Client(transport=transport, timeout=TIMEOUT_SECONDS) as client:
            response = client.get(url, headers={"Authorization": f"Token {token}"})
    except httpx.HTTPError as error:
        raise GateInputError(f"GET {url}: {error}") from None
    if response.status_code != 200:
        raise GateInputError(f"GET {url}: {response.status_code} {_detail(response)}")
    try:
        document = response.json()
    except ValueError:
        raise GateInputError(f"GET {url}: the answer is not JSON") from None
    if not isinstance(document, dict):
        raise GateInputError(f"GET {url}: the answer is not a metrics document")
    return document


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    return str(body.get("detail", body)) if isinstance(body, dict) else str(body)[:200]
