"""Read span documents from JSONL: one `{"document_id", "text", "entities": [...]}` object a line.

Every problem is recorded with its file, line, document and field (`entities[3].end`), and reading
goes on, so a user sees all of them in one pass. The loop is the hot path of an offline evaluation
(100,000 documents, 2 million spans), so it does one `json.loads` per line, string comparisons for
`text` checks and no per-character work.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from annotations.importers.checks import NESTED_TOO_DEEPLY, annotator_problem
from annotations.importers.errors import ImportProblem, ProblemCollector
from annotations.importers.json_lines import NOT_PARSED, parse_json_bytes
from annotations.importers.labels import LabelResolver
from annotations.importers.span_types import Role, SpanAnnotation, SpanDocument


def iter_jsonl_documents(
    stream: BinaryIO, *, source: str, role: Role, labels: LabelResolver, problems: ProblemCollector
) -> Iterator[SpanDocument]:
    """Yield each valid document of a JSONL stream; record problems for the others.

    Gold documents need `text`. Predictions may omit it; then their offsets and entity texts are
    checked later against the gold text (see `metrics.pipeline.span_evaluation.pair_span_documents`).
    """
    return iter_jsonl_lines(
        enumerate(stream, start=1), source=source, role=role, labels=labels, problems=problems
    )


def iter_jsonl_lines(
    lines: Iterable[tuple[int, bytes]],
    *,
    source: str,
    role: Role,
    labels: LabelResolver,
    problems: ProblemCollector,
) -> Iterator[SpanDocument]:
    """`iter_jsonl_documents` on (line number, raw line) pairs, e.g. a share of a file's lines.

    Each document is yielded before the next line is read.
    """
    for line_number, raw_line in lines:
        if raw_line.isspace() or not raw_line:
            continue
        # orjson parses the usual line about twice as fast as json; a line where its answer could
        # differ from json's (NaN, lone surrogate escapes, integers beyond 64 bits, a byte order mark,
        # malformed JSON) takes the json path below, which reads and words everything as it always did.
        record = parse_json_bytes(raw_line)
        if record is not NOT_PARSED:
            document = _document_from_record(
                record, source=source, line=line_number, role=role, labels=labels, problems=problems
            )
            if document is not None:
                yield document
            continue
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.error(
                f"not UTF-8 (invalid byte at column {error.start + 1})", file=source, line=line_number
            )
            continue
        if line_number == 1 and line.startswith("\ufeff"):
            line = line[1:]  # a byte order mark, as some Windows editors write
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems.error(
                f"malformed JSON: {error.msg} (column {error.colno})", file=source, line=line_number
            )
            continue
        except RecursionError:
            problems.error(NESTED_TOO_DEEPLY, file=source, line=line_number)
            continue
        document = _document_from_record(
            record, source=source, line=line_number, role=role, labels=labels, problems=problems
        )
        if document is not None:
            yield document


def _document_from_record(
    record: Any, *, source: str, line: int, role: Role, labels: LabelResolver, problems: ProblemCollector
) -> SpanDocument | None:
    if type(record) is not dict:
        problems.error("expected a JSON object per line", file=source, line=line)
        return None
    valid = True
    document_id = record.get("document_id")
    if type(document_id) is not str or not document_id:
        problems.error("required; a non-empty string", file=source, line=line, field="document_id")
        document_id = None
        valid = False
    where = {"file": source, "line": line, "document_id": document_id}

    text = record.get("text")
    if text is None and role == "gold":
        problems.error("required: the full document text", field="text", **where)
        valid = False
    elif text is not None and type(text) is not str:
        problems.error("must be a string", field="text", **where)
        text = None
        valid = False

    entities = record.get("entities")
    if type(entities) is not list:
        problems.error("required; a list of entities (may be empty)", field="entities", **where)
        return None
    if not valid:
        # Without a document id or text the spans cannot be checked; report the line once.
        return None
    spans = _spans(
        entities, text, document_id=document_id, role=role, labels=labels, problems=problems, where=where
    )
    if spans is None:
        return None
    # Several annotators' versions of a document are several lines, each naming its annotator.
    annotator = record.get("annotator")
    why = None if annotator is None else annotator_problem(annotator)
    if why is not None:
        problems.error(why, field="annotator", **where)
        return None
    return SpanDocument(document_id, text, spans, source, line, annotator=annotator)


def _spans(
    entities: list[Any],
    text: str | None,
    *,
    document_id: str,
    role: Role,
    labels: LabelResolver,
    problems: ProblemCollector,
    where: dict[str, Any],
) -> list[SpanAnnotation] | None:
    """The document's spans, or None after recording what is wrong with them.

    The fast path accepts a well-formed entity with one combined test; anything else goes to
    `_entity_problems`, which works out what exactly is wrong. Unknown labels go through the resolver
    so that it can record them; known ones are served from its cache directly.
    """
    spans = []
    valid = True
    # Without a text (predictions may omit it) only the lower bound can be checked here.
    text_length = len(text) if text is not None else 1 << 62
    known_labels = labels.known_label_cache
    # Builds the named tuple without its generated Python-level __new__: half the cost, and this line
    # runs two million times in a 100,000-document evaluation.
    new_tuple = tuple.__new__
    for index, entity in enumerate(entities):
        try:
            start = entity["start"]
            end = entity["end"]
            entity_type = entity["entity_type"]
        except (KeyError, TypeError):  # a missing field, or an entity that is not an object
            pass
        else:
            entity_text = entity.get("text")
            # `type(x) is int` rather than isinstance: JSON true/false must not pass as 1/0.
            if (
                type(start) is int
                and type(end) is int
                and type(entity_type) is str
                and 0 <= start < end <= text_length
                and (
                    entity_text is None
                    or (type(entity_text) is str and (text is None or text[start:end] == entity_text))
                )
            ):
                label = known_labels.get(entity_type) or labels.resolve(entity_type, document_id)
                # A checked entity text is dropped; one that could not be checked yet is kept.
                spans.append(
                    new_tuple(
                        SpanAnnotation,
                        (start, end, label[0], label[1], entity_text if text is None else None),
                    )
                )
                continue
        problems.errors.extend(_entity_problems(entity, index, text, where))
        valid = False
    return spans if valid else None


def _entity_problems(entity: Any, index: int, text: str | None, where: dict[str, Any]) -> list[ImportProblem]:
    """What is wrong with an entity that failed the fast path's test."""
    prefix = f"entities[{index}]"
    if type(entity) is not dict:
        return [ImportProblem("must be an object", field=prefix, **where)]
    start, end = entity.get("start"), entity.get("end")
    entity_type, entity_text = entity.get("entity_type"), entity.get("text")
    problems = [
        ImportProblem(f"required; an integer, got {value!r}", field=f"{prefix}.{name}", **where)
        for name, value in (("start", start), ("end", end))
        if type(value) is not int
    ]
    if type(entity_type) is not str:
        problems.append(
            ImportProblem(f"required; a string, got {entity_type!r}", field=f"{prefix}.entity_type", **where)
        )
    if entity_text is not None and type(entity_text) is not str:
        problems.append(ImportProblem("must be a string", field=f"{prefix}.text", **where))
    if problems:
        return problems
    text_length = len(text) if text is not None else None
    if start < 0 or start >= end or (text_length is not None and end > text_length):
        # Name the offset to fix: `end` when only the end is past the text, `start` otherwise.
        field = f"{prefix}.{'end' if 0 <= start < end else 'start'}"
        return [ImportProblem(offsets_problem(start, end, text_length), field=field, **where)]
    assert text is not None and entity_text is not None
    found = text[start:end]
    return [
        ImportProblem(text_mismatch_problem(start, end, entity_text, found), field=f"{prefix}.text", **where)
    ]


def offsets_problem(start: int, end: int, text_length: int | None) -> str:
    """Why offsets are invalid, in words a user can act on."""
    if start < 0:
        return f"offsets [{start}, {end}) are negative"
    if start >= end:
        return f"offsets [{start}, {end}): start must be smaller than end"
    return f"offsets [{start}, {end}) reach past the end of the text ({text_length} code points)"


def text_mismatch_problem(start: int, end: int, expected: str, found: str) -> str:
    return (
        f"text {expected!r} does not match the document text at [{start}, {end}), which is {found!r} "
        "(offsets are Unicode code points, end exclusive)"
    )
