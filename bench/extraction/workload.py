"""A seeded extraction workload shaped like a real EPPI Reviewer project.

Two shapes (`SHAPES`): "standard", 20,000 documents x 10 attributes with ~2 KB contexts (the issue's
workload), and "long", 5,000 documents x 40 attributes (the ten in four arms) with ~8 KB contexts: as
many comparison rows and as many context bytes, in fewer, longer documents.

Documents have contexts in which most gold values occur; gold comes as an EPPI Reviewer export
with citations (`Page N:` and `[¬s]…[¬e]` markup); predictions carry the errors real pipelines make:
wrong and near-miss values, invalid values, duplicates, missing annotations, failed documents and
documents with no line at all. Same seed, same files.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

ATTRIBUTES = (  # (attribute_id, label, type)
    (1001, "Randomised", "bool"),
    (1002, "Blinded", "bool"),
    (1003, "Placebo controlled", "bool"),
    (1004, "Country", "string"),
    (1005, "Intervention", "string"),
    (1006, "Primary outcome", "string"),
    (1007, "Participants", "integer"),
    (1008, "Follow-up weeks", "integer"),
    (1009, "Mean age", "float"),
    (1010, "Dropout rate", "float"),
)

COUNTRIES = ("Kenya", "Uganda", "Peru", "Viet Nam", "Germany", "Brazil", "India", "Ghana", "Chile", "Nepal")
INTERVENTIONS = (
    "cash transfers",
    "school meals",
    "community health workers",
    "bed nets",
    "text message reminders",
    "microfinance loans",
    "deworming tablets",
    "water filters",
)
OUTCOMES = (
    "school attendance",
    "child mortality",
    "household income",
    "malaria incidence",
    "vaccination coverage",
    "weight for age",
)
FILLER = [
    "the",
    "study",
    "population",
    "was",
    "drawn",
    "from",
    "rural",
    "districts",
    "where",
    "access",
    "to",
    "services",
    "was",
    "limited",
    "and",
    "enrolment",
    "followed",
    "the",
    "published",
    "protocol",
    "with",
    "consent",
    "obtained",
    "from",
    "every",
    "household",
    "before",
    "baseline",
    "measurements",
    "were",
    "taken",
    "by",
    "trained",
    "enumerators",
    "who",
    "were",
    "not",
    "told",
    "the",
    "allocation",
]


@dataclass(frozen=True)
class Shape:
    documents: int  # the default number of documents
    arms: int  # the ten attributes repeated this many times, ids 1001.., 2001.., ...
    context_chars: int  # filler is added until the context is about this long


SHAPES = {
    "standard": Shape(documents=20_000, arms=1, context_chars=1900),
    "long": Shape(documents=5_000, arms=4, context_chars=7600),
}


def _attributes(arms: int) -> list[tuple[int, str, str, int]]:
    """(attribute_id, label, type, the attribute's id in the first arm) of every arm."""
    return [
        (attribute_id + 1000 * arm, label if arm == 0 else f"{label} (arm {arm + 1})", kind, attribute_id)
        for arm in range(arms)
        for attribute_id, label, kind in ATTRIBUTES
    ]


@dataclass(frozen=True)
class WorkloadFiles:
    prompts: Path
    gold: Path
    predictions: Path
    config: Path


def _gold_values(rng: random.Random) -> dict[int, object]:
    return {
        1001: rng.random() < 0.6,
        1002: rng.random() < 0.4,
        1003: rng.random() < 0.3,
        1004: rng.choice(COUNTRIES),
        1005: rng.choice(INTERVENTIONS),
        1006: rng.choice(OUTCOMES),
        1007: rng.randint(20, 25_000),
        1008: rng.choice((4, 8, 12, 24, 52)),
        1009: round(rng.uniform(5, 70), 1),
        1010: round(rng.uniform(0, 0.4), 3),
    }


def _number_text(value: object) -> str:
    # A large count is written with a thousands separator now and then, as papers do.
    if isinstance(value, int) and value >= 1000 and value % 3 == 0:
        return f"{value:,}"
    return str(value)


def _context(rng: random.Random, arms: list[dict[int, object]], length: int) -> str:
    sentences: list[str] = []
    facts = [fact for values in arms for fact in _facts(values)]
    # Some facts are left out of what the model read: gold "not in context" (bad source) cases.
    facts = [fact for fact in facts if rng.random() < 0.9]
    while sum(map(len, sentences)) < length:
        if facts and rng.random() < 0.15:
            sentences.append(facts.pop())
        else:
            sentences.append(" ".join(rng.choices(FILLER, k=14)).capitalize() + ".")
    sentences.extend(facts)
    return " ".join(sentences)


def _facts(values: dict[int, object]) -> list[str]:
    return [
        f"The trial took place in {values[1004]}.",
        f"Households received {values[1005]}.",
        f"The primary outcome was {values[1006]}.",
        f"We enrolled {_number_text(values[1007])} participants.",
        f"Follow-up lasted {values[1008]} weeks.",
        f"The mean age was {values[1009]} years.",
        f"The dropout rate was {values[1010]}.",
        "Allocation was randomised." if values[1001] else "Allocation was by village.",
    ]


def _citation(rng: random.Random, text: str) -> list[dict]:
    page = rng.randint(1, 14)
    return [
        {"ItemDocumentId": rng.randint(1, 10**6), "Text": f'Page {page}:\n[¬s]"{text}"[¬e]', "ItemArm": ""}
    ]


def _prediction(rng: random.Random, attribute_type: str, gold: object) -> object:
    roll = rng.random()
    if roll < 0.78:
        return gold
    if roll < 0.83:
        return "not reported"  # invalid for numbers, wrong for strings, invalid for BOOL
    if attribute_type == "bool":
        return not gold
    if attribute_type == "string":
        return str(gold).upper() if roll < 0.9 else rng.choice(COUNTRIES + INTERVENTIONS)
    if attribute_type == "integer":
        return int(gold) + rng.randint(1, 50)
    return round(float(gold) * rng.uniform(0.8, 1.2), 3)


def generate(
    directory: Path, *, documents: int | None = None, seed: int, shape: str = "standard"
) -> WorkloadFiles:
    """The workload of `shape` (`SHAPES`) with `documents` documents (None: the shape's number)."""
    form = SHAPES[shape]
    documents = form.documents if documents is None else documents
    attributes = _attributes(form.arms)
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    files = WorkloadFiles(
        prompts=directory / "prompts.csv",
        gold=directory / "gold_eppi.json",
        predictions=directory / "llm.jsonl",
        config=directory / "config.yaml",
    )
    _write_prompts(files.prompts, attributes)
    files.config.write_text(
        "model: bench-model\nprovider: bench\nedit_distance_match_threshold: 0.9\nnumber_format: en\n",
        encoding="utf-8",
    )
    references = []
    with open(files.predictions, "w", encoding="utf-8") as predictions:
        for index in range(documents):
            reference, line = _document(rng, form, attributes, index)
            references.append(reference)
            if line is not None:
                predictions.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(files.gold, "w", encoding="utf-8") as handle:
        export = {"CodeSets": _code_sets(attributes), "References": references}
        json.dump(export, handle, ensure_ascii=False, indent=1)
    return files


def _write_prompts(path: Path, attributes: list[tuple[int, str, str, int]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "output_data_type", "attribute_id", "attribute_label"])
        for attribute_id, label, attribute_type, _ in attributes:
            writer.writerow(
                [f"Extract: {label}. Answer with a {attribute_type}.", attribute_type, attribute_id, label]
            )


def _code_sets(attributes: list[tuple[int, str, str, int]]) -> list[dict]:
    return [
        {
            "SetName": "Data extraction",
            "Attributes": {
                "AttributesList": [
                    {"AttributeId": attribute_id, "AttributeName": label}
                    for attribute_id, label, _, _ in attributes
                ]
            },
        }
    ]


def _document(
    rng: random.Random, form: Shape, attributes: list[tuple[int, str, str, int]], index: int
) -> tuple[dict, dict | None]:
    """(the EPPI reference of document `index`, its prediction line or None when it has none)."""
    item_id = 500_000 + index
    arms = [_gold_values(rng) for _ in range(form.arms)]
    context = _context(rng, arms, form.context_chars)
    codes = []
    annotations = []
    for attribute_id, _, attribute_type, first_arm_id in attributes:
        gold = arms[(attribute_id - first_arm_id) // 1000][first_arm_id]
        code = _gold_code(rng, attribute_id, attribute_type, gold)
        if code is not None:
            codes.append(code)
        annotations.extend(_predicted_annotations(rng, attribute_id, attribute_type, gold))
    reference = {"ItemId": item_id, "Title": f"Study {index}", "Codes": codes}
    roll = rng.random()
    if roll < 0.01:
        return reference, None  # no line: failed extraction
    line = {
        "document_id": str(item_id),
        "context": context,
        "annotations": annotations,
        "input_tokens": len(context) // 4 + 400,
        "output_tokens": 60 + 12 * len(annotations),
        "cost_usd": round(rng.uniform(0.001, 0.004), 6),
        "timings": {
            "document_preparation": round(rng.uniform(0.01, 0.1), 3),
            "llm_extraction": round(rng.uniform(0.8, 6), 3),
        },
    }
    if roll < 0.03:
        line.update(status="failed", error="provider timeout", annotations=[])
    return reference, line


def _gold_code(rng: random.Random, attribute_id: int, attribute_type: str, gold: object) -> dict | None:
    """The EPPI code of one gold value, None when the value is absent (the type's default applies)."""
    if attribute_type == "bool":
        if not gold:
            return None
        return {"AttributeId": attribute_id, "AdditionalText": "", "ItemAttributeFullTextDetails": []}
    if rng.random() >= 0.93:
        return None
    text = _number_text(gold) if attribute_type == "integer" else str(gold)
    if rng.random() < 0.003:
        text = "see table 2"  # invalid gold
    return {
        "AttributeId": attribute_id,
        "AdditionalText": text,
        "ItemAttributeFullTextDetails": _citation(rng, text),
    }


def _predicted_annotations(
    rng: random.Random, attribute_id: int, attribute_type: str, gold: object
) -> list[dict]:
    """The model's annotations of one attribute: none (left out), one, or a duplicate pair."""
    if rng.random() < 0.03:
        return []  # the model left the attribute out
    predicted = _prediction(rng, attribute_type, gold)
    annotation = {
        "attribute_id": str(attribute_id),
        "output_data": predicted,
        "additional_text": str(gold) if rng.random() < 0.7 else None,
        "reasoning": "Stated in the methods section.",
    }
    if rng.random() < 0.005:
        return [annotation, {"attribute_id": str(attribute_id), "output_data": predicted}]  # duplicate
    return [annotation]
