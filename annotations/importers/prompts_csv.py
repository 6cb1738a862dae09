"""The prompt CSV of an extraction run: which attributes exist, their types, and their prompts.

Columns (any order, others ignored): `prompt, output_data_type, attribute_id, attribute_label`.
Types are bool, string, integer, float, list or dict in any case. Only attributes with a non-empty
prompt are scored (docs/semantics.md section 2): a row with an empty prompt leaves its attribute out,
and the result says so, so the report can list it.

Line numbers are physical lines of the file (the header is line 1); a quoted prompt spanning several
lines is reported at the line where its row starts.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field

from annotations.importers.attribute_jsonl import decode_utf8, read_source
from annotations.importers.checks import ColumnLimits, text_problem
from annotations.importers.errors import ImportProblem, ProblemCollector
from annotations.importers.sources import SourceInput
from metrics.engine.attributes.types import AttributeSpec, AttributeType

REQUIRED_COLUMNS = ("prompt", "output_data_type", "attribute_id", "attribute_label")


@dataclass
class PromptSet:
    """Every attribute of the file, in file order; `scored` have a prompt, `skipped` do not.

    The engine takes all of them: an attribute without a prompt still belongs to the schema (a
    document coded only for it has gold), it is just not scored.
    """

    attributes: list[AttributeSpec]
    warnings: list[ImportProblem] = field(default_factory=list)

    @property
    def scored(self) -> list[AttributeSpec]:
        return [spec for spec in self.attributes if spec.is_scored]

    @property
    def skipped(self) -> list[AttributeSpec]:
        return [spec for spec in self.attributes if not spec.is_scored]


def read_prompts_csv(
    source: SourceInput, *, name: str | None = None, limits: ColumnLimits | None = None
) -> PromptSet:
    """Read a prompt CSV; raise InputValidationError listing every problem found.

    With `limits` (the server's columns), an attribute id or label longer than its column is a
    problem too. A NUL character, or a cell beyond the csv module's field size, is one everywhere.
    """
    data, file = read_source(source, name)
    problems = ProblemCollector()
    text = decode_utf8(data, file, problems)
    problems.raise_if_errors()
    limits = limits or ColumnLimits()
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = _rows(reader, file, problems)
    # Headers are matched after stripping, so " prompt" in a hand-edited file still works.
    columns = [column.strip() for column in next(rows, [])]
    problems.raise_if_errors()
    position = _required_positions(columns, file, problems)
    attributes: list[AttributeSpec] = []
    first_line: dict[str, int] = {}
    previous_end = reader.line_num
    for cells in rows:
        # A row starts on the line after the previous row ended (blank lines are rows of no cells).
        line, previous_end = previous_end + 1, reader.line_num
        if len(cells) > len(columns):
            problems.error("the row has more cells than the header", file=file, line=line)
            continue
        spec = _row_attribute(cells, position, _Where(file, line, problems), limits, first_line)
        if spec is None:
            continue
        attributes.append(spec)
        if not spec.is_scored:
            problems.warn(
                f"attribute {spec.attribute_id!r} ({spec.label}) has an empty prompt and is not scored",
                file=file,
                line=line,
                field="prompt",
            )
    problems.raise_if_errors()
    return PromptSet(attributes=attributes, warnings=problems.warnings)


def _required_positions(columns: list[str], file: str, problems: ProblemCollector) -> dict[str, int]:
    """Where each required column is in the header; every missing one stops the reading."""
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        problems.error(
            f"missing column(s) {', '.join(missing)}; found {', '.join(columns) or 'no header'}",
            file=file,
            line=1,
            field=", ".join(missing),
        )
        problems.raise_if_errors()
    return {column: columns.index(column) for column in REQUIRED_COLUMNS}


@dataclass(frozen=True)
class _Where:
    file: str
    line: int
    problems: ProblemCollector

    def error(self, message: str, column: str) -> None:
        self.problems.error(message, file=self.file, line=self.line, field=column)


def _row_attribute(
    cells: list[str],
    position: dict[str, int],
    where: _Where,
    limits: ColumnLimits,
    first_line: dict[str, int],
) -> AttributeSpec | None:
    """The attribute of one row (None for a blank row, or one whose cells or type are unfit; the
    problems are recorded at `where`). `first_line` holds each attribute id's first line."""
    values = {
        column: cells[index].strip() if index < len(cells) else "" for column, index in position.items()
    }
    if not any(values.values()):
        return None
    unfit = False
    for column, limit in (
        ("attribute_id", limits.attribute_id),
        ("attribute_label", limits.attribute_label),
        ("prompt", None),
        ("output_data_type", None),
    ):
        problem = text_problem(values[column], max_length=limit)
        if problem is not None:
            where.error(f"the {column} {problem}", column)
            unfit = True
    if unfit:
        return None
    attribute_id = values["attribute_id"]
    if not attribute_id:
        where.error("attribute_id is empty", "attribute_id")
    elif attribute_id in first_line:
        where.error(
            f"duplicate attribute_id {attribute_id!r} (first on line {first_line[attribute_id]})",
            "attribute_id",
        )
    else:
        first_line[attribute_id] = where.line
    if not values["attribute_label"]:
        where.error("attribute_label is empty", "attribute_label")
    try:
        attribute_type = AttributeType.parse(values["output_data_type"])
    except ValueError as error:
        where.error(str(error), "output_data_type")
        return None
    # The prompt is kept as written (inner whitespace matters to a model); only its emptiness is
    # judged after stripping.
    prompt = cells[position["prompt"]] if position["prompt"] < len(cells) else ""
    return AttributeSpec(
        attribute_id=attribute_id, label=values["attribute_label"], type=attribute_type, prompt=prompt
    )


def _rows(reader, file: str, problems: ProblemCollector) -> Iterator[list[str]]:
    """The reader's rows, until one cannot be read (a cell beyond the csv module's field size limit,
    131,072 characters, is no prompt): that is a problem at its line, and reading stops there."""
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problems.error(f"cannot read the row: {error}", file=file, line=reader.line_num)
            return
        yield cells
