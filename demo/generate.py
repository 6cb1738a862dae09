"""Write the bundled demo data: invented, never real patient data. Run it again to rebuild the files.

    python demo/generate.py

- deid/: 30 discharge letters (German and English) with their identifiers as gold spans, and the
  output of two imaginary de-identification pipelines (most identifiers found, some partly, some
  missed, a few false alarms): predictions.jsonl (rule-based) and predictions_v2.jsonl (better).
- extraction/: 20 trial abstracts coded in an EPPI-Reviewer-like export (gold), the prompt CSV, the
  pipeline's config.yaml and its predictions (context, values, verbatim support, tokens, cost, timings):
  predictions.jsonl (a small model) and predictions_large.jsonl (a better, larger one).

Everything comes from a seeded random generator, so the files are the same on every machine.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECOND_MODEL_SEED = 20260102
ANNOTATOR_SEED = 20260103
FIRST = [
    "Anna",
    "Jonas",
    "Lea",
    "Paul",
    "Mia",
    "Felix",
    "Emma",
    "Noah",
    "Clara",
    "Ben",
    "Sofia",
    "Lukas",
    "Ida",
    "Tom",
    "Greta",
]
LAST = [
    "Berger",
    "Hofmann",
    "Keller",
    "Wagner",
    "Schulz",
    "Brandt",
    "Vogel",
    "Roth",
    "Frank",
    "Lorenz",
    "Miller",
    "Harris",
    "Evans",
    "Clarke",
    "Turner",
]
CITIES = ["Berlin", "Hamburg", "Leipzig", "Bremen", "Kassel", "York", "Bristol", "Leeds"]
STREETS = ["Hauptstraße", "Lindenweg", "Gartenstraße", "Mill Lane", "Church Road", "Bahnhofstraße"]
CLINICS = ["Klinikum Nord", "St. Anna Hospital", "Riverside Clinic", "Praxis am Markt"]
PROFESSIONS = ["Bäckerin", "Lehrer", "engineer", "nurse", "Landwirt"]
COUNTRIES = ["Kenya", "Uganda", "Peru", "Vietnam", "Ghana", "Nepal", "Brazil", "India"]
OUTCOMES = ["mortality at 28 days", "HbA1c at 12 weeks", "time to recovery", "pain score at 6 weeks"]


def letter(rng: random.Random, index: int) -> tuple[str, list[tuple[str, str]]]:
    """A letter's text and its identifiers (text, type), in order of appearance."""
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    doctor = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    birth = f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.{rng.randint(1930, 1990)}"
    admitted = f"{rng.randint(1, 28):02d}.{rng.randint(1, 12):02d}.2024"
    patient_id = f"{rng.randint(1000, 9999)}-{rng.randint(10, 99)}"
    address = f"{rng.choice(STREETS)} {rng.randint(1, 80)}, {rng.randint(10000, 99999)} {rng.choice(CITIES)}"
    phone = f"+49 {rng.randint(30, 89)} {rng.randint(1000000, 9999999)}"
    clinic = rng.choice(CLINICS)
    age = str(rng.randint(25, 95))
    profession = rng.choice(PROFESSIONS)
    if index % 3 == 2:
        parts = [
            ("Discharge letter for ", None),
            (name, "PERSON_NAME"),
            (", born ", None),
            (birth, "DATE_OF_BIRTH"),
            (", patient ID ", None),
            (patient_id, "ID_NUMBER"),
            (". The ", None),
            (age, "AGE"),
            ("-year-old ", None),
            (profession, "PROFESSION"),
            (" was admitted to ", None),
            (clinic, "ORGANIZATION"),
            (" on ", None),
            (admitted, "OTHER_DATE"),
            (" with community-acquired pneumonia. Treated by Dr. ", None),
            (doctor, "PERSON_NAME"),
            (". Follow-up by phone: ", None),
            (phone, "PHONE"),
            (".", None),
        ]
    elif index % 3 == 1:
        parts = [
            ("Sehr geehrte Kollegin, wir berichten über ", None),
            (name, "PERSON_NAME"),
            (", geb. ", None),
            (birth, "DATE_OF_BIRTH"),
            (", wohnhaft ", None),
            (address, "ADDRESS"),
            (", die am ", None),
            (admitted, "OTHER_DATE"),
            (" in der ", None),
            (clinic, "ORGANIZATION"),
            (
                " stationär aufgenommen wurde. Diagnose: Herzinsuffizienz NYHA II. Mit freundlichen Grüßen, Dr. ",
                None,
            ),
            (doctor, "PERSON_NAME"),
            (".", None),
        ]
    else:
        parts = [
            ("Entlassungsbrief. Patient: ", None),
            (name, "PERSON_NAME"),
            (" (", None),
            (age, "AGE"),
            (" J.), Fallnummer ", None),
            (patient_id, "ID_NUMBER"),
            (". Aufnahme am ", None),
            (admitted, "OTHER_DATE"),
            (" wegen Hüft-TEP links. Rückfragen unter ", None),
            (phone, "PHONE"),
            (". Befund ohne Besonderheiten.", None),
        ]
    return "".join(text for text, _ in parts), parts


def spans_of(parts) -> list[dict]:
    spans, position = [], 0
    for text, entity_type in parts:
        if entity_type is not None:
            spans.append(
                {"start": position, "end": position + len(text), "entity_type": entity_type, "text": text}
            )
        position += len(text)
    return spans


# Cumulative chances that a gold span is found exactly, found short, found with the wrong type (else
# missed): the first pipeline, and a better second one so that the leaderboard and compare have two.
RULE_BASED = (0.70, 0.82, 0.90)
TRANSFORMER = (0.88, 0.94, 0.97)
# A second annotator: agrees with the gold annotator on most spans, bounds or type differ on a few.
SECOND_ANNOTATOR = (0.93, 0.97, 0.995)


def predicted(
    rng: random.Random,
    text: str,
    gold: list[dict],
    chances: tuple[float, float, float] = RULE_BASED,
    *,
    false_alarms: bool = True,
) -> list[dict]:
    """An imperfect pipeline: exact most of the time, sometimes short or mistyped, sometimes blind."""
    exact, short, mistyped_below = chances
    out = []
    for span in gold:
        roll = rng.random()
        if roll < exact:
            out.append({"start": span["start"], "end": span["end"], "entity_type": span["entity_type"]})
        elif roll < short:
            end = max(span["start"] + 1, span["end"] - rng.randint(1, 3))
            out.append({"start": span["start"], "end": end, "entity_type": span["entity_type"]})
        elif roll < mistyped_below:
            mistyped = "OTHER_DATE" if span["entity_type"] == "DATE_OF_BIRTH" else "OTHER_PII"
            out.append({"start": span["start"], "end": span["end"], "entity_type": mistyped})
        # else: missed
    if false_alarms and rng.random() < 0.3:
        word = next((w for w in ("Diagnose", "Befund", "pneumonia", "Treated") if w in text), None)
        if word:
            start = text.index(word)
            out.append({"start": start, "end": start + len(word), "entity_type": "PERSON_NAME"})
    return out


def write_deid(rng: random.Random) -> None:
    folder = HERE / "deid"
    folder.mkdir(exist_ok=True)
    letters = []
    with (
        (folder / "gold.jsonl").open("w", encoding="utf-8") as gold,
        (folder / "predictions.jsonl").open("w", encoding="utf-8") as predictions,
    ):
        for index in range(30):
            document_id = f"letter-{index + 1:02d}"
            text, parts = letter(rng, index)
            spans = spans_of(parts)
            gold.write(
                json.dumps({"document_id": document_id, "text": text, "entities": spans}, ensure_ascii=False)
                + "\n"
            )
            entry = {"document_id": document_id, "entities": predicted(rng, text, spans)}
            predictions.write(json.dumps(entry, ensure_ascii=False) + "\n")
            letters.append((document_id, text, spans))
    # The second pipeline draws from its own generator, so the first one's files stay as they were.
    better = random.Random(SECOND_MODEL_SEED)
    with (folder / "predictions_v2.jsonl").open("w", encoding="utf-8") as predictions:
        for document_id, text, spans in letters:
            entry = {"document_id": document_id, "entities": predicted(better, text, spans, TRANSFORMER)}
            predictions.write(json.dumps(entry, ensure_ascii=False) + "\n")
    # A second annotator of the same letters (a human run): the human ceiling beside the pipelines.
    annotator = random.Random(ANNOTATOR_SEED)
    with (folder / "annotator_b.jsonl").open("w", encoding="utf-8") as annotations:
        for document_id, text, spans in letters:
            entry = {
                "document_id": document_id,
                "entities": predicted(annotator, text, spans, SECOND_ANNOTATOR, false_alarms=False),
            }
            annotations.write(json.dumps(entry, ensure_ascii=False) + "\n")


PROMPTS = [
    ("Was allocation to the arms randomised?", "bool", "201", "Randomised"),
    ("In which country was the study conducted?", "string", "202", "Country"),
    ("How many participants were enrolled?", "integer", "203", "Participants"),
    ("What was the mean age of participants in years?", "float", "204", "Mean age"),
    ("Were outcome assessors blinded?", "bool", "205", "Blinded"),
    ("What was the primary outcome?", "string", "206", "Primary outcome"),
    ("", "string", "207", "Funding source"),
]


def abstract(rng: random.Random, index: int) -> tuple[str, dict]:
    facts = {
        "201": rng.random() < 0.6,
        "202": rng.choice(COUNTRIES),
        "203": rng.randint(40, 2500),
        "204": round(rng.uniform(18, 75), 1),
        "205": rng.random() < 0.4,
        "206": rng.choice(OUTCOMES),
    }
    design = (
        "Participants were randomly allocated to two arms"
        if facts["201"]
        else "A prospective cohort was followed"
    )
    blinding = " Outcome assessors were blinded." if facts["205"] else ""
    text = (
        f"Background. We studied an invented intervention (trial {index + 1}). Methods. {design}; the study was "
        f"conducted in {facts['202']}. We enrolled {facts['203']:,} participants with a mean age of "
        f"{facts['204']} years.{blinding} The primary outcome was {facts['206']}. Results. No real data are shown."
    )
    return text, facts


def write_extraction(rng: random.Random) -> None:
    folder = HERE / "extraction"
    folder.mkdir(exist_ok=True)
    with (folder / "prompts.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["prompt", "output_data_type", "attribute_id", "attribute_label"])
        writer.writerows(PROMPTS)
    (folder / "config.yaml").write_text(
        "# The imaginary extraction pipeline of the demo.\nmodel: demo-llm-small\nprovider: demo\n"
        "temperature: 0\nedit_distance_match_threshold: 0.85\nnumber_format: en\n",
        encoding="utf-8",
    )
    references, lines, abstracts = [], [], []
    for index in range(20):
        item_id = 3001 + index
        text, facts = abstract(rng, index)
        codes = []
        for attribute_id, value in facts.items():
            if isinstance(value, bool):
                if value:
                    codes.append({"AttributeId": int(attribute_id), "AdditionalText": ""})
                continue
            shown = f"{value:,}" if attribute_id == "203" else str(value)
            code = {"AttributeId": int(attribute_id), "AdditionalText": str(value)}
            if attribute_id == "202":
                code["ItemAttributeFullTextDetails"] = [
                    {
                        "ItemDocumentId": 9000 + index,
                        "Text": f'Page 1:\n[¬s]"conducted in {shown}"[¬e]',
                        "ItemArm": "",
                    }
                ]
            codes.append(code)
        if index == 19:
            codes = []  # not coded yet: listed as unscored
        references.append({"ItemId": item_id, "Title": f"Invented trial {index + 1}", "Codes": codes})
        lines.append(prediction(rng, str(item_id), text, facts, failed=index == 7))
        abstracts.append((str(item_id), text, facts))
    export = {
        "CodeSets": [
            {
                "SetName": "Demo data extraction",
                "SetId": 1,
                "Attributes": {
                    "AttributesList": [
                        {"AttributeId": int(attribute_id), "AttributeName": label}
                        for _, _, attribute_id, label in PROMPTS
                    ]
                },
            }
        ],
        "References": references,
    }
    (folder / "gold_eppi.json").write_text(
        json.dumps(export, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with (folder / "predictions.jsonl").open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    better = random.Random(SECOND_MODEL_SEED)
    with (folder / "predictions_large.jsonl").open("w", encoding="utf-8") as handle:
        for document_id, text, facts in abstracts:
            line = prediction(better, document_id, text, facts, failed=False, skill=LARGE_MODEL)
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")


# Chances of the right value per kind of attribute: bool, country, participants, mean age, outcome.
SMALL_MODEL = (0.85, 0.8, 0.75, 0.8, 0.7)
LARGE_MODEL = (0.95, 0.95, 0.92, 0.93, 0.9)


def prediction(
    rng: random.Random,
    document_id: str,
    text: str,
    facts: dict,
    *,
    failed: bool,
    skill: tuple[float, float, float, float, float] = SMALL_MODEL,
) -> dict:
    timings = {
        "document_preparation": round(rng.uniform(0.02, 0.1), 3),
        "llm_extraction": round(rng.uniform(1, 4), 2),
    }
    if failed:
        return {"document_id": document_id, "status": "failed", "error": "provider timeout after 60 s",
                "input_tokens": 900, "output_tokens": 0, "cost_usd": 0.0004, "timings": timings}  # fmt: skip
    annotations = []
    for attribute_id, value in facts.items():
        roll = rng.random()
        right_bool, right_country, right_count, right_age, right_outcome = skill
        if isinstance(value, bool):
            guess = value if roll < right_bool else not value
        elif attribute_id == "202":
            guess = (
                value if roll < right_country else (value.lower() if roll < 0.9 else rng.choice(COUNTRIES))
            )
        elif attribute_id == "203":
            guess = value if roll < right_count else value + rng.randint(1, 20)
        elif attribute_id == "204":
            guess = value if roll < right_age else round(value + rng.uniform(-3, 3), 1)
        else:
            guess = value if roll < right_outcome else value.split(" at ")[0]
        if roll > 0.97:
            continue  # the model said nothing about it
        annotations.append(
            {
                "attribute_id": attribute_id,
                "output_data": guess,
                "additional_text": str(value) if not isinstance(value, bool) else None,
                "reasoning": "Stated in the methods section.",
            }  # fmt: skip
        )
    return {
        "document_id": document_id,
        "context": text,
        "status": "ok",
        "annotations": annotations,
        "input_tokens": rng.randint(700, 1400),
        "output_tokens": rng.randint(60, 160),
        "cost_usd": round(rng.uniform(0.0005, 0.003), 5),
        "timings": timings,
    }


if __name__ == "__main__":
    generator = random.Random(20260101)
    write_deid(generator)
    write_extraction(generator)
    print(f"demo data written under {HERE}")
