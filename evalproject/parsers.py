"""The JSON parser every JSON body goes through (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]).

Kept apart from `evalproject.api`: DRF imports it while it defines APIView, so it must not import views.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

from evalproject.validation import JsonProblem, json_loads_checked


class InvalidJSONBody(ParseError):
    """A JSON body the database could not store: 400 with `errors`, each naming the field (a path from
    the body's root) and, inside a document, its `document_id`."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_json"

    def __init__(self, problems: list[JsonProblem]):
        message = "The JSON body cannot be stored: " + "; ".join(
            f"{problem.path or '(body)'}: {problem.message}" for problem in problems[:3]
        )
        super().__init__(detail=message, code=self.default_code)
        self.detail = {
            "detail": message,
            "code": self.default_code,
            "errors": [problem.as_dict() for problem in problems],
        }


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing with a 400 what the database would refuse with a 500.

    NaN and Infinity are read (rather than refused as DRF does) so that the 400 can name where they are,
    like 1e309, which reads as an infinity. A document too deep for `json.loads` (RecursionError) is
    a 400 naming the path where it passed MAX_JSON_DEPTH.
    """

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        if stream is None:
            return {}
        encoding = get_encoding(parser_context or {})
        try:
            text = stream.read().decode(encoding)
        except (UnicodeDecodeError, LookupError) as error:
            raise ParseError(f"JSON parse error - the body is not {encoding} text: {error}") from None
        try:
            data, problems = json_loads_checked(text)
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if problems:
            raise InvalidJSONBody(problems)
        return data
