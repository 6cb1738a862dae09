"""What a request value must be for the database to store it, checked before anything is written.

PostgreSQL refuses the NUL character in text and in jsonb, jsonb refuses NaN and the infinities, and
columns have lengths and integer ranges. SQLite accepts most of these, so a value that passes the tests
on SQLite would answer 500 in production. The JSON parser (`evalproject.api.BoundedJSONParser`), the
serializer fields below and the prediction readers all ask these two questions:

- `text_problem`: is this string fit for a text column (no NUL, no lone surrogate, not too long)?
- `json_problems`: is this value fit for a jsonb column (finite numbers that a float can hold, bounded
  depth, strings and keys fit for text)?
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from annotations.importers.checks import JSON_MAX_DEPTH, text_fault

# Deeper than any configuration or DICT value seen (under 10 levels), and far below Python's recursion
# limit, which json.dumps, yaml and repr still meet when they walk the value later. The importers' limit.
MAX_JSON_DEPTH = JSON_MAX_DEPTH
# A value's problems are reported up to this many; the rest are counted.
MAX_PROBLEMS = 20

# The ranges of the integer columns (models.IntegerField and models.BigIntegerField on PostgreSQL).
INTEGER_MAX = 2**31 - 1
BIGINTEGER_MAX = 2**63 - 1

FLOAT_MAX = sys.float_info.max


def text_problem(value: str, *, max_length: int | None = None) -> str | None:
    """Why `value` cannot be stored in a text column of `max_length` characters, or None when it can
    (the importers' check, `annotations.importers.checks.text_fault`, phrased for a request field)."""
    fault = text_fault(value, max_length=max_length)
    if fault is None:
        return None
    if fault.kind == "nul":
        return f"must not contain the NUL character (\\u0000, at character {fault.at})"
    if fault.kind == "surrogate":
        return f"must be valid Unicode (a lone surrogate at character {fault.at})"
    return f"must be at most {fault.max_length} characters long (it has {fault.length})"


@dataclass(frozen=True)
class JsonProblem:
    """Where in a JSON value (`path`, as `documents[0].annotations[1].output_data`) and why it cannot be
    stored; `document_id` is that of the nearest enclosing object that has one, so a problem in a
    batch names its document."""

    path: str
    message: str
    document_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.path or "(body)", "document_id": self.document_id, "message": self.message}


def json_path(parent: str, step: str | int) -> str:
    if isinstance(step, int):
        return f"{parent}[{step}]"
    return f"{parent}.{step}" if parent else step


def json_problems(value: Any, *, path: str = "", max_depth: int = MAX_JSON_DEPTH) -> list[JsonProblem]:
    """Every part of `value` that a jsonb column would refuse (up to MAX_PROBLEMS): non-finite numbers,
    nesting deeper than `max_depth`, and keys or strings that are not fit for text. Iterative, so a
    value of any depth is checked without recursion."""
    problems: list[JsonProblem] = []
    for problem in _walk(value, path, max_depth):
        problems.append(problem)
        if len(problems) == MAX_PROBLEMS:
            break
    return problems


def _walk(value: Any, root: str, max_depth: int) -> Iterator[JsonProblem]:
    # (value, path, depth, document_id of the nearest enclosing object that has one)
    pending: list[tuple[Any, str, int, str | None]] = [(value, root, 0, None)]
    while pending:
        item, path, depth, document_id = pending.pop()
        if isinstance(item, str):
            why = text_problem(item)
            if why is not None:
                yield JsonProblem(path, why, document_id)
        elif isinstance(item, float):
            if not math.isfinite(item):
                yield JsonProblem(path, f"must be a finite number, not {item!r}", document_id)
        elif isinstance(item, int) and abs(item) > FLOAT_MAX:
            # Scoring and the gate compute in floats: an integer no float can hold would overflow there.
            yield JsonProblem(
                path, "must be a finite number a float can hold (at most about 1.8e308)", document_id
            )
        elif isinstance(item, (dict, list)):
            if depth >= max_depth:
                yield JsonProblem(path, f"is nested deeper than {max_depth} levels", document_id)
                continue
            if isinstance(item, dict):
                own_id = item.get("document_id")
                if isinstance(own_id, (str, int)) and not isinstance(own_id, bool):
                    document_id = str(own_id)
                children = []
                for key, child in item.items():
                    key_text = str(key)
                    why = text_problem(key_text)
                    if why is not None:
                        yield JsonProblem(json_path(path, repr(key_text)), f"key {why}", document_id)
                    children.append((child, json_path(path, key_text), depth + 1, document_id))
            else:
                children = [
                    (child, json_path(path, index), depth + 1, document_id)
                    for index, child in enumerate(item)
                ]
            pending.extend(reversed(children))


def json_loads_checked(text: str, *, path: str = "") -> tuple[Any, list[JsonProblem]]:
    """The JSON document `text` and its `json_problems`. NaN and Infinity are read as floats, so that
    the problems name where they are; a document too deep for `json.loads` is one problem naming where
    it passed MAX_JSON_DEPTH. Raises ValueError for text that is not JSON."""
    try:
        value = json.loads(text, parse_constant=float)
    except RecursionError:
        where = deepest_path(text) or ""
        full_path = f"{path}.{where}" if path and where else path or where
        return None, [JsonProblem(full_path, f"is nested deeper than {MAX_JSON_DEPTH} levels")]
    return value, json_problems(value, path=path)


def deepest_path(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """The path at which the JSON document `text` first nests deeper than `max_depth` ("" for its
    root), or None when it does not.

    Reads tokens without building the value, for documents too deep for `json.loads` to parse at all.
    """
    # (kind, key or index) of every open container; `expect_key` is True right after "{" or "," in an object.
    stack: list[list] = []
    expect_key = False
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', text):
        symbol = token.group()
        if symbol in "[{":
            if len(stack) >= max_depth:
                return _stack_path(stack)
            stack.append(["array", 0] if symbol == "[" else ["object", None])
            expect_key = symbol == "{"
        elif symbol in "]}":
            if stack:
                stack.pop()
            expect_key = False
        elif symbol == ",":
            if stack and stack[-1][0] == "array":
                stack[-1][1] += 1
            expect_key = bool(stack) and stack[-1][0] == "object"
        elif symbol == ":":
            expect_key = False
        elif expect_key and stack:
            stack[-1][1] = symbol[1:-1]
            expect_key = False
    return None


def _stack_path(stack: list[list]) -> str:
    path = ""
    for kind, step in stack:
        if step is not None:
            path = json_path(path, step if kind == "array" else str(step))
    return path


def raise_json_problems(problems: list[JsonProblem]) -> None:
    if problems:
        raise serializers.ValidationError(
            [
                f"{problem.path}: {problem.message}" if problem.path else problem.message
                for problem in problems
            ]
        )


class StorableJSONField(serializers.JSONField):
    """A JSON value a jsonb column can store (see `json_problems`)."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        raise_json_problems(json_problems(value))
        return value


class JSONTextField(serializers.CharField):
    """JSON sent as text (in a form field), read into the value a jsonb column can store."""

    def to_internal_value(self, data: Any) -> Any:
        text = super().to_internal_value(data)
        if text == "":
            return None
        try:
            value, problems = json_loads_checked(text)
        except ValueError as error:
            raise serializers.ValidationError(f"must be JSON: {error}") from None
        raise_json_problems(problems)
        return value


class ChoiceField(serializers.ChoiceField):
    """A choice whose error lists the valid values: `"span" is not a valid choice; expected one of: ...`."""

    default_error_messages = {
        "invalid_choice": '"{input}" is not a valid choice; expected one of: {choices}.',
    }

    def fail(self, key: str, **kwargs: Any) -> None:
        if key == "invalid_choice":
            kwargs["choices"] = ", ".join(str(choice) or '""' for choice in self.choice_strings_to_values)
        super().fail(key, **kwargs)
