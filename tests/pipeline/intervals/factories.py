"""Small synthetic runs for the interval, comparison and gate tests: span and extraction files.

Every document has a person's name, a date of birth and a phone number (spans), or a randomisation
flag, a country and a participant count (attributes). Runs differ in which of them they get right.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

TEXT = "Patient {name}, born 01.02.1980, phone 0761 {phone}."
NAMES = ("Anna Berger", "Max Weber", "Petra Kurz", "Jan Ott")


def _span_document(index: int) -> dict:
    name = NAMES[index % len(NAMES)]
    phone = f"{100000 + index:06d}"
    text = TEXT.format(name=name, phone=phone)
    name_start = text.index(name)
    date_start = text.index("01.02.1980")
    phone_start = text.index("0761")
    return {
        "document_id": f"doc-{index:03d}",
        "text": text,
        "entities": [
            {"start": name_start, "end": name_start + len(name), "entity_type": "PERSON_NAME"},
            {"start": date_start, "end": date_start + 10, "entity_type": "DATE_OF_BIRTH"},
            {"start": phone_start, "end": phone_start + 11, "entity_type": "PHONE"},
        ],
    }


def write_jsonl(path: Path, lines: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def span_gold(directory: Path, documents: int) -> Path:
    return write_jsonl(directory / "gold.jsonl", (_span_document(i) for i in range(documents)))


def span_predictions(
    directory: Path,
    name: str,
    documents: int,
    *,
    keeps: Callable[[int, str], bool] = lambda index, entity_type: True,
    skip: Iterable[int] = (),
) -> Path:
    """Predictions holding the gold spans `keeps(index, type)` accepts; documents in `skip` are not
    predicted at all (no line)."""
    skipped = set(skip)
    lines = []
    for index in range(documents):
        if index in skipped:
            continue
        document = _span_document(index)
        entities = [entity for entity in document["entities"] if keeps(index, entity["entity_type"])]
        lines.append({"document_id": document["document_id"], "entities": entities})
    return write_jsonl(directory / f"{name}.jsonl", lines)


PROMPTS_CSV = (
    "prompt,output_data_type,attribute_id,attribute_label\n"
    "Was allocation randomised?,bool,101,Randomised\n"
    "In which country?,string,102,Country\n"
    "How many participants?,integer,103,Participants\n"
)


def _gold_values(index: int) -> dict:
    return {"101": index % 2 == 0, "102": "Kenya" if index % 3 else "Uganda", "103": 100 + index}


def extraction_inputs(directory: Path, documents: int) -> tuple[Path, Path]:
    """(gold JSONL, prompts CSV) for `documents` documents."""
    prompts = directory / "prompts.csv"
    prompts.write_text(PROMPTS_CSV, encoding="utf-8")
    gold = write_jsonl(
        directory / "gold.jsonl",
        (
            {
                "document_id": f"trial-{index:03d}",
                "name": f"Trial {index}",
                "attributes": {key: {"output_data": value} for key, value in _gold_values(index).items()},
            }
            for index in range(documents)
        ),
    )
    return gold, prompts


def extraction_predictions(
    directory: Path,
    name: str,
    documents: int,
    *,
    wrong: Callable[[int, str], bool] = lambda index, attribute_id: False,
    skip: Iterable[int] = (),
) -> Path:
    """Predictions equal to gold, except the values `wrong(index, attribute_id)` picks (flipped,
    another country, one more participant); documents in `skip` have no line."""
    skipped = set(skip)
    lines = []
    for index in range(documents):
        if index in skipped:
            continue
        values = _gold_values(index)
        if wrong(index, "101"):
            values["101"] = not values["101"]
        if wrong(index, "102"):
            values["102"] = "Tanzania"
        if wrong(index, "103"):
            values["103"] += 1
        gold = _gold_values(index)
        lines.append(
            {
                "document_id": f"trial-{index:03d}",
                "context": f"A trial in {gold['102']} enrolled {gold['103']} participants.",
                "annotations": [{"attribute_id": key, "output_data": value} for key, value in values.items()],
            }
        )
    return write_jsonl(directory / f"{name}.jsonl", lines)
