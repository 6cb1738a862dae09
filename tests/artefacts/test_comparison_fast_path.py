"""goldstandard_llm_comparison.csv: the line writer against the csv module it replaces.

`comparison_csv` writes most rows as their cells joined by commas (the citation details cell
quoted on its own); the reference is `csv.writer.writerows` over each row's `cells.cell` of every
value (the percentages with two decimals), which the writer replaces. Random rows put every character the csv module quotes for (comma, double quote, CR, LF)
and every formula trigger in every text cell, and every kind of value in the value cells.
"""

from __future__ import annotations

import csv
import io
import random
from types import SimpleNamespace

import pytest

from experiments.models import RunKind
from metrics.artefacts.cells import cell
from metrics.artefacts.comparison import comparison_csv
from metrics.artefacts.exports import comparison_csv_stream
from metrics.engine.attributes.types import COMPARISON_COLUMNS, MatchStatus
from tests.artefacts.factories import row

PIECES = [
    "a",
    "Kenya",
    ",",
    '"',
    "\r",
    "\n",
    "\r\n",
    " ",
    "=",
    "+",
    "-",
    "@",
    "\t",
    "'",
    "é",
    "[¬s]",
    "1,250",
]
VALUES = [None, "", True, False, 0, -3, 12, 2.5, -0.0, 0.0, float("nan"), 1e20, ["a", 1], {"k": "v"}]


def random_text(rng: random.Random) -> str | None:
    if rng.random() < 0.15:
        return None
    return "".join(rng.choices(PIECES, k=rng.randint(0, 5)))


def random_row(rng: random.Random):
    return row(
        document_id=random_text(rng) or "d",
        external_id=random_text(rng),
        document_name=random_text(rng),
        attribute_id=random_text(rng) or "a",
        attribute_label=random_text(rng) or "A",
        extraction_run_id=random_text(rng) or "r",
        attribute_presence=rng.random() < 0.5,
        human_additional_text=random_text(rng),
        item_attribute_full_text_details=rng.choice(
            [None, "", 'Page 3:\n[¬s]"12,000"[¬e]', "plain", random_text(rng)]
        ),
        citation_page=rng.choice([None, "3", "3: 4"]),
        citation_highlight_text=random_text(rng),
        human_extraction=rng.choice([*VALUES, random_text(rng)]),
        llm_extraction=rng.choice([*VALUES, random_text(rng)]),
        llm_reasoning=random_text(rng),
        llm_verbatim_text=random_text(rng),
        human_verbatim_fuzzy_match_pct=rng.choice([0.0, -0.0, 100.0, 87.5, 33.33, 100]),
        llm_verbatim_fuzzy_match_pct=rng.choice([0.0, 50.0, 12.345, 99.99]),
        gold_value_in_citation=rng.choice([None, True, False]),
        gold_value_in_context=rng.choice([None, True, False]),
        match_status=rng.choice([None, *MatchStatus]),
    )


def reference_cells(row) -> list:
    cells = []
    for name in COMPARISON_COLUMNS:
        value = getattr(row, name)
        if name.endswith("_fuzzy_match_pct"):
            cells.append("" if value is None else f"{value:.2f}")
        elif name == "match_status":
            cells.append("" if value is None else value.value)
        else:
            cells.append(cell(value))
    return cells


def reference_csv(rows, cells=reference_cells) -> str:
    destination = io.StringIO()
    writer = csv.writer(destination)
    writer.writerow(COMPARISON_COLUMNS)
    writer.writerows(map(cells, rows))
    return destination.getvalue()


@pytest.mark.parametrize("seed", range(5))
def test_the_line_writer_writes_what_the_csv_module_writes(seed):
    rng = random.Random(seed)
    rows = [random_row(rng) for _ in range(3_000)]  # more than one block of lines
    assert "".join(comparison_csv(rows)) == reference_csv(rows)


@pytest.mark.parametrize("seed", range(3))
def test_the_server_streams_stored_rows_as_the_reference_writes_them(seed):
    rng = random.Random(seed)
    rows = [random_row(rng) for _ in range(1_000)]
    stored = [
        SimpleNamespace(
            columns={name: getattr(row, name) for name in COMPARISON_COLUMNS},
            attribute=SimpleNamespace(type=row.attribute_type.value),
        )
        for row in rows
    ]
    assert "".join(comparison_csv_stream(RunKind.ATTRIBUTES, stored)) == reference_csv(rows)


def test_no_rows_is_the_header_alone():
    assert "".join(comparison_csv([])) == reference_csv([])


@pytest.mark.parametrize("seed", range(3))
def test_rows_of_one_document_sharing_their_cells_are_written_as_the_csv_module_writes(seed):
    # As the engine makes them: a document's rows share its id and name (the same objects), an
    # attribute's rows its id and label; a writer that kept those cells from row to row must never
    # carry over a document or label that changed (a version that did measured no faster).
    rng = random.Random(seed)
    attributes = [(random_text(rng) or "a", random_text(rng) or "A") for _ in range(4)]
    attributes.append(attributes[0][:1] + ("relabelled",))  # the same id under another label
    rows = []
    document_id = external_id = "d"
    for index in range(400):
        if rng.random() < 0.7:  # else the very same id (and external id) with another name
            document_id = rng.choice([str(index), random_text(rng) or "d"])
            external_id = rng.choice([document_id, random_text(rng)])
        name = random_text(rng)
        run_id = rng.choice(["run", "run", random_text(rng) or "r"])
        for attribute_id, label in rng.sample(attributes, k=rng.randint(1, len(attributes))):
            rows.append(
                row(
                    document_id=document_id,
                    external_id=external_id,
                    document_name=name,
                    attribute_id=attribute_id,
                    attribute_label=label,
                    extraction_run_id=run_id,
                    item_attribute_full_text_details=rng.choice([None, 'Page 3:\n[¬s]"12,000"[¬e]']),
                    llm_reasoning=random_text(rng),
                )
            )
    assert "".join(comparison_csv(rows)) == reference_csv(rows)
