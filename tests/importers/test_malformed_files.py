"""A malformed upload fails its import job with a problem naming the file and the line or field, and
nothing is stored: never "internal error; see the worker log".

Each case is a file that reached the database (or crashed a parser) before: NUL characters, lone
surrogates, ids, labels and titles longer than their columns, deep nesting, NaN and 1e309, a cell
beyond the csv module's field limit, encrypted and method-99 zip entries, and CAS offsets that are
not integers (which were dropped without a word). PostgreSQL refuses NUL where SQLite stores it, so
the suite also runs on PostgreSQL (`scripts/test tests/importers`).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from dataclasses import dataclass

import pytest

from annotations.models import Attribute, Document, GoldSpan, GoldVersion, Job, JobState
from annotations.services.imports import import_job_create
from tests.importers.test_span_fixtures import cas_json
from tests.services.test_gold_import_fixtures import media_root, upload  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("media_root")

TEXT = "Herr Max Mustermann wohnt in Berlin."
DEEP = "[" * 5000 + "]" * 5000


@dataclass(frozen=True)
class Case:
    name: str
    file_name: str
    content: bytes
    # What the first error must name: its field (a prefix of it), or its line.
    field: str | None = None
    line: int | None = None
    # The file the problem names, when not the upload itself (an entry in an archive).
    problem_file: str | None = None


def span_line(document_id: str = "letter-1", text: str = TEXT, entity: dict | None = None) -> dict:
    entity = entity if entity is not None else {"start": 5, "end": 19, "entity_type": "PatientName"}
    return {"document_id": document_id, "text": text, "entities": [entity]}


def jsonl(*records: dict | str) -> bytes:
    lines = [record if isinstance(record, str) else json.dumps(record) for record in records]
    return ("\n".join(lines) + "\n").encode()


def attribute_line(output_data: object = "Kenya", **fields: object) -> dict:
    value = {"output_data": output_data, "additional_text": "in Kenya"}
    value.update(fields.pop("value", {}))
    return {"document_id": "1001", "name": "Smith 2020", "attributes": {"102": value}, **fields}


def eppi(reference: dict) -> bytes:
    base = {"ItemId": 1001, "Title": "Smith 2020", "Codes": [{"AttributeId": 102, "AdditionalText": "Kenya"}]}
    return json.dumps({"CodeSets": [], "References": [{**base, **reference}]}).encode()


def prompts(*rows: str) -> bytes:
    return ("prompt,output_data_type,attribute_id,attribute_label\n" + "\n".join(rows) + "\n").encode()


def cas_with(begin: object, end: object) -> bytes:
    """A CAS file whose one span has the given (raw JSON) begin and end."""
    document = json.loads(cas_json(TEXT, [(5, 19, "PatientName")]))
    span = next(fs for fs in document["%FEATURE_STRUCTURES"] if fs["%TYPE"] == "custom.Span")
    span["begin"], span["end"] = "@BEGIN@", "@END@"
    return json.dumps(document).replace('"@BEGIN@"', begin).replace('"@END@"', end).encode()


def zipped(members: dict[str, bytes], *, flag_bits: int = 0, method: int | None = None) -> bytes:
    """A zip archive; `flag_bits` and `method` are written into every entry's headers afterwards
    (zipfile writes neither encrypted entries nor unknown methods)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    data = bytearray(buffer.getvalue())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        position = data.find(signature)
        while position >= 0:
            flags, current_method = struct.unpack_from("<HH", data, position + flags_at)
            struct.pack_into(
                "<HH",
                data,
                position + flags_at,
                flags | flag_bits,
                current_method if method is None else method,
            )
            position = data.find(signature, position + 4)
    return bytes(data)


CASES = [
    # Span JSONL
    Case(
        "nul_in_text",
        "letters.jsonl",
        jsonl(span_line(text="Herr Max\x00Mustermann wohnt in Berlin.")),
        "text",
        1,
    ),
    Case(
        "nul_in_document_id", "letters.jsonl", jsonl(span_line(), span_line("letter\x002")), "document_id", 2
    ),
    Case(
        "nul_in_label",
        "letters.jsonl",
        jsonl(span_line(entity={"start": 5, "end": 19, "entity_type": "Patient\x00Name"})),
        "entities[0].entity_type",
        1,
    ),
    Case(
        "lone_surrogate_in_text",
        "letters.jsonl",
        b'{"document_id": "d", "text": "a\\ud800b", "entities": []}\n',
        "text",
        1,
    ),
    Case("long_document_id", "letters.jsonl", jsonl(span_line("d" * 300)), "document_id", 1),
    Case(
        "long_label",
        "letters.jsonl",
        jsonl(span_line(entity={"start": 5, "end": 19, "entity_type": "L" * 250})),
        "entities[0].entity_type",
        1,
    ),
    Case(
        "deep_nesting_in_jsonl",
        "letters.jsonl",
        jsonl(span_line(), '{"document_id": "letter-2", "text": "x", "entities": ' + DEEP + "}"),
        line=2,
    ),
    Case(
        "nan_offset",
        "letters.jsonl",
        jsonl(
            '{"document_id": "d", "text": "abc", "entities": [{"start": NaN, "end": 2, "entity_type": "NAME"}]}'
        ),
        "entities[0].start",
        1,
    ),
    Case(
        "offset_1e309",
        "letters.jsonl",
        jsonl(
            '{"document_id": "d", "text": "abc", "entities": [{"start": 0, "end": 1e309, "entity_type": "NAME"}]}'
        ),
        "entities[0].end",
        1,
    ),
    # INCEpTION UIMA CAS JSON
    Case(
        "cas_nul_in_text",
        "letter-1.json",
        cas_json("Herr Max\x00Mustermann wohnt in Berlin.", [(5, 19, "PatientName")]),
        "text",
    ),
    Case("cas_begin_is_a_string", "letter-1.json", cas_with('"9"', "19"), "begin"),
    Case("cas_begin_is_nan", "letter-1.json", cas_with("NaN", "19"), "begin"),
    Case("cas_end_is_1e309", "letter-1.json", cas_with("5", "1e309"), "end"),
    Case("cas_long_label", "letter-1.json", cas_json(TEXT, [(5, 19, "L" * 250)]), "label"),
    Case(
        "cas_deep_nesting",
        "letter-1.json",
        b'{"%FEATURE_STRUCTURES": [\n{"%TYPE": "x", "deep": ' + DEEP.encode() + b"}]}",
        line=2,
    ),
    Case(
        "cas_long_document_id",
        "export.zip",
        zipped({f"annotation/{'d' * 300}.txt/alice.json": cas_json(TEXT, [(5, 19, "PatientName")])}),
        "document_id",
        problem_file=f"export.zip!annotation/{'d' * 300}.txt/alice.json",
    ),
    # Zip archives
    Case(
        "encrypted_zip_member",
        "export.zip",
        zipped({"letter-1.json": cas_json(TEXT, [])}, flag_bits=0x1),
        problem_file="export.zip!letter-1.json",
    ),
    Case(
        "method_99_zip_member",
        "export.zip",
        zipped({"letter-1.json": cas_json(TEXT, [])}, method=99),
        problem_file="export.zip!letter-1.json",
    ),
    # Attribute gold JSONL
    Case("nul_in_a_value", "gold.jsonl", jsonl(attribute_line("Ken\x00ya")), "attributes.102.output_data", 1),
    Case(
        "nul_in_a_value_key",
        "gold.jsonl",
        jsonl(attribute_line({"a\x00": 1})),
        "attributes.102.output_data",
        1,
    ),
    Case(
        "nan_value",
        "gold.jsonl",
        jsonl('{"document_id": "1001", "attributes": {"102": {"output_data": NaN}}}'),
        "attributes.102.output_data",
        1,
    ),
    Case(
        "value_1e309",
        "gold.jsonl",
        jsonl('{"document_id": "1001", "attributes": {"102": {"output_data": [1, 1e309]}}}'),
        "attributes.102.output_data[1]",
        1,
    ),
    Case(
        "deeply_nested_value",
        "gold.jsonl",
        jsonl(attribute_line(json.loads("[" * 100 + "]" * 100))),
        "attributes.102.output_data",
        1,
    ),
    Case(
        "value_nested_too_deep_to_parse",
        "gold.jsonl",
        jsonl(
            attribute_line(), '{"document_id": "1002", "attributes": {"102": {"output_data": ' + DEEP + "}}}"
        ),
        line=2,
    ),
    Case(
        "nul_in_additional_text",
        "gold.jsonl",
        jsonl(attribute_line(value={"additional_text": "in\x00Kenya"})),
        "attributes.102.additional_text",
        1,
    ),
    Case("long_title", "gold.jsonl", jsonl(attribute_line(name="T" * 600)), "name", 1),
    Case(
        "long_attribute_id",
        "gold.jsonl",
        jsonl({"document_id": "1001", "attributes": {"a" * 150: {"output_data": 1}}}),
        "attributes.",
        1,
    ),
    # EPPI Reviewer JSON
    Case("eppi_long_title", "eppi.json", eppi({"Title": "T" * 600}), "name"),
    Case(
        "eppi_nul_in_additional_text",
        "eppi.json",
        eppi({"Codes": [{"AttributeId": 102, "AdditionalText": "Ken\x00ya"}]}),
        "attributes.102",
    ),
    Case(
        "eppi_deep_nesting", "eppi.json", b'{"CodeSets": [],\n"References": ' + DEEP.encode() + b"}", line=2
    ),
    # Prompt CSV
    Case(
        "csv_cell_of_10_mb",
        "prompts.csv",
        prompts("What country?,string,102,Country", "x" * 10_000_000 + ",string,103,Size"),
        line=3,
    ),
    Case(
        "csv_nul_in_label",
        "prompts.csv",
        prompts("What country?,string,102,Coun\x00try"),
        "attribute_label",
        2,
    ),
    Case(
        "csv_long_attribute_id",
        "prompts.csv",
        prompts(f"What country?,string,{'a' * 150},Country"),
        "attribute_id",
        2,
    ),
    Case(
        "csv_long_label",
        "prompts.csv",
        prompts(f"What country?,string,102,{'L' * 400}"),
        "attribute_label",
        2,
    ),
]


def test_there_are_at_least_22_kinds_of_malformed_file():
    assert len(CASES) >= 22
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_malformed_file_fails_its_job_naming_the_file_and_place(project, alice, case):
    attributes_before = list(Attribute.objects.values_list("attribute_id", flat=True))

    job = import_job_create(project=project, user=alice, upload=upload(case.file_name, case.content))

    job = Job.objects.get(pk=job.pk)
    assert job.state == JobState.FAILED, job.result
    assert job.errors, "a failed job names its problems"
    problem = job.errors[0]
    assert "internal error" not in problem["message"]
    assert "\x00" not in json.dumps(job.errors)
    assert problem["file"] == (case.problem_file or case.file_name), problem
    # The place: a line, a field, or (for an archive's entry as a whole) the entry itself.
    assert problem["line"] is not None or problem["field"] or "!" in problem["file"], problem
    if case.field is not None:
        assert (problem["field"] or "").startswith(case.field), problem
    if case.line is not None:
        assert problem["line"] == case.line, problem
    assert not Document.objects.exists()
    assert not GoldVersion.objects.exists()
    assert not GoldSpan.objects.exists()
    assert list(Attribute.objects.values_list("attribute_id", flat=True)) == attributes_before
