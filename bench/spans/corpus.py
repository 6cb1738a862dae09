"""A seeded synthetic de-identification corpus in the JSONL shape of docs/semantics.md section 1.

About 1 KB of German-clinical-looking text per document with ~10 gold spans, and predictions that
look like a real pipeline's: most exact, some of the wrong type, some shifted or cut (partial), some
missed, a few spurious. Nothing here is patient data; names come from small invented pools.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

_FIRST = ["Max", "Anna", "Jürgen", "Petra", "Wolfgang", "Sabine", "Lukas", "Özlem", "Marie", "Klaus"]
_LAST = ["Mustermann", "Beispiel", "Schäfer", "Müller", "Schmidt", "Weber", "Wagner", "Becker"]
_CITY = ["Berlin", "Hamburg", "München", "Köln", "Dresden", "Leipzig"]
_STREET = ["Hauptstraße", "Bahnhofstr.", "Lindenweg", "Am Markt", "Schillerplatz"]
_ORG = ["Klinikum Nord", "Praxis Dr. Weber", "St. Marien-Krankenhaus", "Uniklinik"]
_PROF = ["Bäcker", "Lehrerin", "Ingenieur", "Pflegekraft"]
_FILLER_TEXT = (
    "der Patient wurde am stationär aufgenommen Befund unauffällig Therapie mit Ibuprofen 400 mg "
    "Kontrolle in zwei Wochen Anamnese keine Allergien bekannt Blutdruck 120/80 mmHg Labor o.B. "
    "Diagnose Entlassung in gutem Allgemeinzustand Empfehlung Weiterbehandlung durch Hausarzt"
)
_WORDS = _FILLER_TEXT.split(" ")


def _entity(rng: random.Random) -> tuple[str, str]:
    """(text, canonical type) of one identifier."""
    kind = rng.random()
    if kind < 0.35:
        name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}" if rng.random() < 0.6 else rng.choice(_LAST)
        return name, "PERSON_NAME"
    if kind < 0.50:
        day, month, year = rng.randint(1, 28), rng.randint(1, 12), rng.randint(1930, 2024)
        return f"{day:02d}.{month:02d}.{year}", rng.choice(["DATE_OF_BIRTH", "OTHER_DATE", "OTHER_DATE"])
    if kind < 0.60:
        return str(rng.randint(10_000, 99_999_999)), "ID_NUMBER"
    if kind < 0.68:
        return (
            f"{rng.choice(_STREET)} {rng.randint(1, 120)}, {rng.randint(10000, 99999)} {rng.choice(_CITY)}",
            "ADDRESS",
        )
    if kind < 0.74:
        return f"0{rng.randint(30, 999)}/{rng.randint(100000, 9999999)}", "PHONE"
    if kind < 0.78:
        return f"{rng.choice(_LAST).lower()}@example.org", "EMAIL"
    if kind < 0.86:
        return f"{rng.randint(18, 99)} Jahre", "AGE"
    if kind < 0.94:
        return rng.choice(_ORG), "ORGANIZATION"
    if kind < 0.97:
        return rng.choice(_PROF), "PROFESSION"
    return rng.choice(["männlich", "weiblich"]), "OTHER_PII"


_TYPES = ["PERSON_NAME", "DATE_OF_BIRTH", "OTHER_DATE", "AGE", "ADDRESS", "PHONE", "EMAIL", "ID_NUMBER"]


def _predict(rng: random.Random, start: int, end: int, entity_type: str, length: int) -> list[dict]:
    """What a decent pipeline predicts for one gold span."""
    roll = rng.random()
    if roll < 0.75:
        return [{"start": start, "end": end, "entity_type": entity_type}]
    if roll < 0.80:
        return [{"start": start, "end": end, "entity_type": rng.choice(_TYPES)}]
    if roll < 0.87:
        new_start = max(0, start + rng.randint(-3, 3))
        new_end = min(length, max(new_start + 1, end + rng.randint(-4, 3)))
        return [{"start": new_start, "end": new_end, "entity_type": entity_type}]
    return []


def write_corpus(directory: Path, documents: int, seed: int) -> tuple[Path, Path, int, int]:
    """Write gold.jsonl and predictions.jsonl; return their paths and the gold and predicted counts."""
    rng = random.Random(seed)
    fillers = [" ".join(rng.choices(_WORDS, k=rng.randint(3, 9))) for _ in range(500)]
    gold_path = directory / "gold.jsonl"
    predictions_path = directory / "predictions.jsonl"
    n_gold = n_predicted = 0
    with (
        gold_path.open("w", encoding="utf-8") as gold_file,
        predictions_path.open("w", encoding="utf-8") as pred_file,
    ):
        for index in range(documents):
            pieces: list[str] = []
            gold: list[dict] = []
            offset = 0
            for _ in range(rng.randint(6, 14)):
                filler = (
                    (" " if pieces else "")
                    + rng.choice(fillers)
                    + rng.choice([" ", ", ", ". ", ":\n", " (", "; "])
                )
                pieces.append(filler)
                offset += len(filler)
                entity_text, entity_type = _entity(rng)
                gold.append({"start": offset, "end": offset + len(entity_text), "entity_type": entity_type})
                pieces.append(entity_text)
                offset += len(entity_text)
            pieces.append(" " + rng.choice(fillers) + ".")
            text = "".join(pieces)
            predicted: list[dict] = []
            for span in gold:
                predicted.extend(_predict(rng, span["start"], span["end"], span["entity_type"], len(text)))
            for _ in range(rng.choice([0, 0, 0, 1])):
                start = rng.randrange(0, len(text) - 8)
                predicted.append(
                    {"start": start, "end": start + rng.randint(3, 8), "entity_type": rng.choice(_TYPES)}
                )
            document_id = f"doc-{index:06d}"
            gold_file.write(
                json.dumps({"document_id": document_id, "text": text, "entities": gold}, ensure_ascii=False)
            )
            gold_file.write("\n")
            pred_file.write(
                json.dumps(
                    {"document_id": document_id, "text": text, "entities": predicted}, ensure_ascii=False
                )
            )
            pred_file.write("\n")
            n_gold += len(gold)
            n_predicted += len(predicted)
    return gold_path, predictions_path, n_gold, n_predicted


# The independent corpus: shaped like the one the figures came from (100,000 documents, ~10
# spans each, the twelve canonical types, random text with non-ASCII letters, ~1.6 KB a document).
# Random words share no vocabulary with the clinical corpus above, so no cache of ours learns them.
_INDEPENDENT_TYPES = [
    "PERSON_NAME",
    "DATE_OF_BIRTH",
    "OTHER_DATE",
    "AGE",
    "ADDRESS",
    "URL",
    "ORGANIZATION",
    "PHONE",
    "EMAIL",
    "ID_NUMBER",
    "PROFESSION",
    "OTHER_PII",
]
_LETTERS = "abcdefghijklmnopqrstuvwxyzäöüßéèçñåøłžšœ"


def _random_word(rng: random.Random) -> str:
    return "".join(rng.choices(_LETTERS, k=rng.randint(2, 11)))


def write_independent_corpus(directory: Path, documents: int, seed: int) -> tuple[Path, Path, int, int]:
    """Write gold.jsonl and predictions.jsonl of the independent corpus; return as `write_corpus`."""
    rng = random.Random(seed)
    gold_path = directory / "gold.jsonl"
    predictions_path = directory / "predictions.jsonl"
    n_gold = n_predicted = 0
    with (
        gold_path.open("w", encoding="utf-8") as gold_file,
        predictions_path.open("w", encoding="utf-8") as pred_file,
    ):
        for index in range(documents):
            words = [_random_word(rng) for _ in range(rng.randint(150, 185))]
            text = " ".join(words)
            # ~10 entities: runs of one to three words, never overlapping each other.
            starts: list[int] = []
            position = 0
            for word in words:
                starts.append(position)
                position += len(word) + 1
            picked = sorted(rng.sample(range(0, len(words) - 3, 4), rng.randint(7, 13)))
            gold = []
            for first in picked:
                last = first + rng.randint(0, 2)
                start, end = starts[first], starts[last] + len(words[last])
                gold.append({"start": start, "end": end, "entity_type": rng.choice(_INDEPENDENT_TYPES)})
            predicted: list[dict] = []
            for span in gold:
                for guess in _predict(rng, span["start"], span["end"], span["entity_type"], len(text)):
                    if rng.random() < 0.05:
                        guess["entity_type"] = rng.choice(_INDEPENDENT_TYPES)
                    predicted.append(guess)
            for _ in range(rng.choice([0, 1, 1, 2])):
                start = rng.randrange(0, len(text) - 12)
                predicted.append(
                    {
                        "start": start,
                        "end": start + rng.randint(3, 12),
                        "entity_type": rng.choice(_INDEPENDENT_TYPES),
                    }
                )
            document_id = f"ind-{index:06d}"
            gold_file.write(
                json.dumps({"document_id": document_id, "text": text, "entities": gold}, ensure_ascii=False)
            )
            gold_file.write("\n")
            pred_file.write(
                json.dumps({"document_id": document_id, "entities": predicted}, ensure_ascii=False)
            )
            pred_file.write("\n")
            n_gold += len(gold)
            n_predicted += len(predicted)
    return gold_path, predictions_path, n_gold, n_predicted
