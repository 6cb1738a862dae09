"""An INCEpTION project export with three annotators, small enough to count by hand.

doc-1 "Max Muster met Eva Berg in Bonn on 1 May."
  alice: PERSON_NAME [0,10) "Max Muster", PERSON_NAME [15,23) "Eva Berg", ADDRESS [27,31) "Bonn"
  bob:   PERSON_NAME [0,10), PERSON_NAME [15,18) "Eva", OTHER_DATE [35,40) "1 May"
  carol: PERSON_NAME [0,10), ORGANIZATION [15,23), ADDRESS [27,31)
doc-2 "Call 555-1234." alice and bob: PHONE [5,13); carol: nothing
doc-3 "Only alice read this." alice alone: left out of every figure
"""

from __future__ import annotations

from tests.importers.test_span_fixtures import cas_json, zip_bytes

TEXTS = {
    "doc-1": "Max Muster met Eva Berg in Bonn on 1 May.",
    "doc-2": "Call 555-1234.",
    "doc-3": "Only alice read this.",
}
ANNOTATIONS = {
    "doc-1": {
        "alice": [(0, 10, "PERSON_NAME"), (15, 23, "PERSON_NAME"), (27, 31, "ADDRESS")],
        "bob": [(0, 10, "PERSON_NAME"), (15, 18, "PERSON_NAME"), (35, 40, "OTHER_DATE")],
        "carol": [(0, 10, "PERSON_NAME"), (15, 23, "ORGANIZATION"), (27, 31, "ADDRESS")],
    },
    "doc-2": {"alice": [(5, 13, "PHONE")], "bob": [(5, 13, "PHONE")], "carol": []},
    "doc-3": {"alice": [(0, 4, "PERSON_NAME")]},
}


def export_zip() -> bytes:
    """The export as INCEpTION writes it: annotation/<document>.txt/<user>.json, an INITIAL_CAS copy,
    the source text and the project file."""
    members = {"exportedproject.json": b"{}"}
    for document_id, by_annotator in ANNOTATIONS.items():
        text = TEXTS[document_id]
        members[f"source/{document_id}.txt"] = text.encode()
        members[f"annotation/{document_id}.txt/INITIAL_CAS.json"] = cas_json(text, [])
        for annotator, spans in by_annotator.items():
            members[f"annotation/{document_id}.txt/{annotator}.json"] = cas_json(text, spans)
    return zip_bytes(members)


def character_labels_by_hand(text: str, spans: list[tuple[int, int, str]]) -> list[str]:
    """The entity type of each code point, or O: written independently of the engine."""
    labels = ["O"] * len(text)
    for start, end, entity_type in spans:
        for position in range(start, end):
            labels[position] = entity_type
    return labels
