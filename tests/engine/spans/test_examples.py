"""Hand-computed examples for every span metric family (docs/semantics.md section 1)."""

from __future__ import annotations

import json

import pytest

from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.results import evaluate_documents, score_span_batches

SEED_TEXT = "Patient: Max Mustermann, geb. 01.02.1980"
NAME = Span(9, 23, "PERSON_NAME")  # "Max Mustermann"
BIRTH = Span(30, 40, "DATE_OF_BIRTH")  # "01.02.1980"


def evaluate(*docs: DocumentSpans, **options) -> dict:
    return evaluate_documents(list(docs), **options)


def doc(text: str, gold: list[Span], predicted: list[Span], document_id: str = "d1") -> DocumentSpans:
    return DocumentSpans(document_id, text, gold, predicted)


def test_the_seed_offsets_point_at_the_entity_texts():
    assert SEED_TEXT[NAME.start : NAME.end] == "Max Mustermann"
    assert SEED_TEXT[BIRTH.start : BIRTH.end] == "01.02.1980"


def test_a_perfect_prediction_scores_one_everywhere_and_leaks_nothing():
    results = evaluate(doc(SEED_TEXT, [NAME, BIRTH], [BIRTH, NAME]))
    chars = results["micro"]["chars"]["all"]
    assert (chars["tp"], chars["fp"], chars["fn"], chars["tn"]) == (24, 0, 0, 16)
    assert (chars["precision"], chars["recall"], chars["f1"], chars["specificity"]) == (1.0, 1.0, 1.0, 1.0)
    for family in ("spans_exact", "spans_overlap"):
        for variant in ("type_agnostic", "typed"):
            assert results["micro"][family][variant]["f1"] == 1.0
    for schema in ("strict", "exact", "partial", "ent_type"):
        assert results["micro"]["nervaluate"][schema]["correct"] == 2
        assert results["micro"]["nervaluate"][schema]["f1"] == 1.0
    assert all(results["leakage"][c]["documents_leaked"] == 0 for c in results["leakage"])


def test_a_document_with_only_false_positives_has_f1_zero_and_no_recall():
    results = evaluate(doc("abc def", [], [Span(0, 3, "OTHER_PII")]))
    chars = results["micro"]["chars"]["all"]
    assert (chars["tp"], chars["fp"], chars["fn"], chars["tn"]) == (0, 3, 0, 4)
    assert chars["precision"] == 0.0
    assert chars["recall"] is None
    assert chars["f1"] == 0.0
    assert chars["specificity"] == 4 / 7
    assert results["micro"]["tokens"]["binary"]["f1"] == 0.0
    assert results["micro"]["chars_typed"]["f1"] == 0.0


def test_an_empty_text_document_is_valid_and_has_nothing_to_leak():
    results = evaluate(doc("", [], []))
    chars = results["micro"]["chars"]["all"]
    assert (chars["tp"], chars["fp"], chars["fn"], chars["tn"]) == (0, 0, 0, 0)
    assert (chars["precision"], chars["recall"], chars["f1"], chars["specificity"]) == (
        None,
        None,
        None,
        None,
    )
    assert results["macro"]["chars"]["all"]["f1"] is None
    assert results["macro"]["chars"]["all"]["n_documents"]["f1"] == 0
    leak = results["leakage"]["any_char"]
    assert leak["documents_leaked"] == 0
    assert leak["rate_all_documents"] == 0.0
    assert leak["rate_documents_with_gold"] is None
    assert results["per_document"][0]["document_id"] == "d1"


def test_nested_and_duplicate_spans_count_once_in_chars():
    gold = [Span(0, 10, "PERSON_NAME"), Span(2, 5, "PERSON_NAME"), Span(0, 10, "PERSON_NAME")]
    predicted = [Span(0, 10, "PERSON_NAME"), Span(0, 10, "PERSON_NAME")]
    chars = evaluate(doc("abcdefghijkl", gold, predicted))["micro"]["chars"]["all"]
    assert (chars["tp"], chars["fp"], chars["fn"], chars["tn"]) == (10, 0, 0, 2)


def test_scored_chars_leave_out_punctuation_and_whitespace():
    # "Max, Anna": the prediction skips ", " only, which leaks nothing worth scoring.
    results = evaluate(
        doc("Max, Anna!", [Span(0, 9, "PERSON_NAME")], [Span(0, 3, "PERSON_NAME"), Span(5, 9, "PERSON_NAME")])
    )
    assert {k: results["micro"]["chars"]["all"][k] for k in ("tp", "fp", "fn", "tn")} == {
        "tp": 7,
        "fp": 0,
        "fn": 2,
        "tn": 1,
    }
    assert {k: results["micro"]["chars"]["scored"][k] for k in ("tp", "fp", "fn", "tn")} == {
        "tp": 7,
        "fp": 0,
        "fn": 0,
        "tn": 0,
    }
    assert results["micro"]["chars"]["scored"]["recall"] == 1.0
    assert results["micro"]["chars"]["scored"]["specificity"] is None
    assert results["leakage"]["any_char"]["documents_leaked"] == 1
    assert results["leakage"]["any_char"]["leaked_characters"] == 2
    assert results["leakage"]["any_char_scored"]["documents_leaked"] == 0
    assert results["leakage"]["entity_missed"]["documents_leaked"] == 0


def test_every_left_out_character_is_left_out():
    text = " ,.!?:;-()\"'\n\t\r"
    scored = evaluate(doc(text, [Span(0, len(text), "OTHER_PII")], []))["micro"]["chars"]["scored"]
    assert (scored["tp"], scored["fp"], scored["fn"], scored["tn"]) == (0, 0, 0, 0)


def test_tokens_are_alphanumeric_runs_inside_each_span_so_10_000_is_two_tokens():
    text = "Betrag 10,000 EUR"
    results = evaluate(doc(text, [Span(7, 13, "ID_NUMBER")], [Span(10, 13, "ID_NUMBER")]))
    tokens = results["micro"]["tokens"]["binary"]
    assert (tokens["tp"], tokens["fp"], tokens["fn"]) == (1, 0, 1)


def test_tokens_split_on_underscore_and_keep_unicode_letters():
    text = "Müller_Schmidt"
    results = evaluate(doc(text, [Span(0, 14, "PERSON_NAME")], [Span(0, 6, "PERSON_NAME")]))
    tokens = results["micro"]["tokens"]["typed"]
    assert (tokens["tp"], tokens["fp"], tokens["fn"]) == (1, 0, 1)


def test_a_span_starting_inside_a_word_yields_the_part_it_covers():
    results = evaluate(doc("Mustermann", [Span(0, 10, "PERSON_NAME")], [Span(3, 10, "PERSON_NAME")]))
    tokens = results["micro"]["tokens"]["binary"]
    assert (tokens["tp"], tokens["fp"], tokens["fn"]) == (0, 1, 1)


def test_typed_tokens_need_the_same_type():
    results = evaluate(doc(SEED_TEXT, [BIRTH], [Span(30, 40, "OTHER_DATE")]))
    assert results["micro"]["tokens"]["binary"]["tp"] == 3
    assert (results["micro"]["tokens"]["typed"]["tp"], results["micro"]["tokens"]["typed"]["fp"]) == (0, 3)


def test_exact_needs_identical_bounds_while_overlap_needs_one_shared_code_point():
    results = evaluate(doc(SEED_TEXT, [NAME], [Span(13, 23, "PERSON_NAME")]))
    assert results["micro"]["spans_exact"]["type_agnostic"]["gt_matched"] == 0
    assert results["micro"]["spans_exact"]["type_agnostic"]["f1"] == 0.0
    assert results["micro"]["spans_overlap"]["type_agnostic"]["gt_matched"] == 1
    assert results["micro"]["spans_overlap"]["typed"]["f1"] == 1.0


def test_overlap_is_many_to_many_existence():
    # One prediction covering two gold spans finds both, and is itself correct once.
    text = "Anna Max Paul"
    results = evaluate(
        doc(text, [Span(0, 4, "PERSON_NAME"), Span(5, 8, "PERSON_NAME")], [Span(0, 8, "PERSON_NAME")])
    )
    overlap = results["micro"]["spans_overlap"]["type_agnostic"]
    assert (overlap["gt_total"], overlap["gt_matched"], overlap["pred_total"], overlap["pred_matched"]) == (
        2,
        2,
        1,
        1,
    )
    assert (overlap["precision"], overlap["recall"], overlap["f1"]) == (1.0, 1.0, 1.0)


def test_touching_is_not_overlapping():
    results = evaluate(doc("abcdef", [Span(0, 3, "OTHER_PII")], [Span(3, 6, "OTHER_PII")]))
    assert results["micro"]["spans_overlap"]["type_agnostic"]["gt_matched"] == 0
    assert results["leakage"]["entity_missed"]["gold_spans_affected"] == 1


def test_right_bounds_wrong_type_is_found_type_agnostic_but_not_typed():
    results = evaluate(doc(SEED_TEXT, [BIRTH], [Span(30, 40, "OTHER_DATE")]))
    assert results["micro"]["spans_exact"]["type_agnostic"]["recall"] == 1.0
    assert results["micro"]["spans_exact"]["typed"]["recall"] == 0.0
    assert results["micro"]["spans_overlap"]["typed"]["precision"] == 0.0
    assert results["micro"]["chars"]["all"]["recall"] == 1.0
    assert results["micro"]["chars_typed"]["recall"] == 0.0
    assert results["per_type"]["DATE_OF_BIRTH"]["char_recall"] == 1.0
    assert results["per_type"]["DATE_OF_BIRTH"]["chars_typed"]["recall"] == 0.0
    assert results["per_type"]["OTHER_DATE"]["char_recall"] is None


def test_spans_f1_is_undefined_without_gold_or_without_predictions():
    no_predictions = evaluate(doc(SEED_TEXT, [NAME], []))["micro"]["spans_exact"]["type_agnostic"]
    assert (no_predictions["precision"], no_predictions["recall"], no_predictions["f1"]) == (None, 0.0, None)
    no_gold = evaluate(doc(SEED_TEXT, [], [NAME]))["micro"]["spans_overlap"]["typed"]
    assert (no_gold["precision"], no_gold["recall"], no_gold["f1"]) == (0.0, None, None)


def test_nervaluate_schemas_on_a_right_span_and_a_wrong_typed_cut_span():
    gold = [Span(0, 5, "PERSON_NAME"), Span(10, 15, "ID_NUMBER")]
    predicted = [Span(0, 5, "PERSON_NAME"), Span(10, 13, "PERSON_NAME")]
    nerval = evaluate(doc("x" * 20, gold, predicted))["micro"]["nervaluate"]

    def counts(schema: str) -> tuple[int, ...]:
        return tuple(nerval[schema][k] for k in ("correct", "incorrect", "partial", "missed", "spurious"))

    assert counts("strict") == (1, 1, 0, 0, 0)
    assert counts("exact") == (1, 1, 0, 0, 0)
    assert counts("partial") == (1, 0, 1, 0, 0)
    assert counts("ent_type") == (1, 1, 0, 0, 0)
    assert (nerval["strict"]["possible"], nerval["strict"]["actual"]) == (2, 2)
    assert (nerval["strict"]["precision"], nerval["strict"]["recall"]) == (0.5, 0.5)
    assert (nerval["partial"]["precision"], nerval["partial"]["recall"], nerval["partial"]["f1"]) == (
        0.75,
        0.75,
        0.75,
    )


def test_nervaluate_ignores_a_one_character_overlap_with_a_gold_span_over_100_characters():
    # nervaluate's min_overlap_percentage of 1.0 applies to the gold length: 1/200 is too little.
    results = evaluate(doc("x" * 300, [Span(0, 200, "ADDRESS")], [Span(199, 205, "ADDRESS")]))
    strict = results["micro"]["nervaluate"]["strict"]
    assert (strict["missed"], strict["spurious"], strict["incorrect"]) == (1, 1, 0)
    assert results["micro"]["spans_overlap"]["typed"]["gt_matched"] == 1


def test_nervaluate_measures_are_null_where_nervaluate_would_say_zero():
    strict = evaluate(doc(SEED_TEXT, [NAME], []))["micro"]["nervaluate"]["strict"]
    assert (strict["precision"], strict["recall"], strict["f1"]) == (None, 0.0, None)


def test_entity_missed_counts_gold_spans_no_prediction_touches():
    results = evaluate(doc(SEED_TEXT, [NAME, BIRTH], [Span(9, 12, "PERSON_NAME")]))
    missed = results["leakage"]["entity_missed"]
    assert (missed["documents_leaked"], missed["gold_spans_affected"], missed["leaked_characters"]) == (
        1,
        1,
        10,
    )
    assert missed["leaked_document_ids"] == ["d1"]
    any_char = results["leakage"]["any_char"]
    assert (any_char["gold_spans_affected"], any_char["leaked_characters"]) == (2, 21)
    assert results["per_type"]["PERSON_NAME"]["leakage"]["entity_missed"]["gold_spans_affected"] == 0
    assert results["per_type"]["DATE_OF_BIRTH"]["leakage"]["entity_missed"]["gold_spans_affected"] == 1


def test_leak_rates_count_all_documents_and_documents_with_gold_separately():
    results = evaluate(
        doc(SEED_TEXT, [NAME], [], document_id="leaks"),
        doc(SEED_TEXT, [NAME], [NAME], document_id="safe"),
        doc("no identifiers here", [], [], document_id="empty"),
    )
    leak = results["leakage"]["entity_missed"]
    assert leak["rate_all_documents"] == 1 / 3
    assert leak["rate_documents_with_gold"] == 1 / 2
    assert results["documents_with_gold"] == 2


def test_macro_is_the_mean_over_documents_where_defined_with_their_number():
    results = evaluate(
        doc("abcd", [Span(0, 4, "OTHER_PII")], [Span(0, 2, "OTHER_PII")], document_id="half"),
        doc("abcd", [Span(0, 4, "OTHER_PII")], [Span(0, 4, "OTHER_PII")], document_id="full"),
        doc("abcd", [], [], document_id="nothing"),
    )
    macro = results["macro"]["chars"]["all"]
    assert macro["recall"] == (0.5 + 1.0) / 2
    assert macro["n_documents"]["recall"] == 2
    assert macro["specificity"] is None or macro["n_documents"]["specificity"] == 1
    assert results["micro"]["chars"]["all"]["recall"] == 6 / 8


def test_restrict_to_gt_types_drops_and_counts_predictions_of_types_absent_from_all_gold():
    docs = [
        doc(SEED_TEXT, [NAME], [NAME, Span(30, 40, "OTHER_DATE")], document_id="a"),
        doc(SEED_TEXT, [BIRTH], [Span(0, 7, "PROFESSION")], document_id="b"),
    ]
    results = evaluate(*docs, restrict_to_gt_types=True)
    assert results["restricted_predictions_dropped"] == 2
    assert results["restricted_predictions_dropped_by_type"] == {"OTHER_DATE": 1, "PROFESSION": 1}
    assert set(results["per_type"]) == {"PERSON_NAME", "DATE_OF_BIRTH"}
    assert results["micro"]["chars"]["all"]["fp"] == 0
    unrestricted = evaluate(*docs)
    assert unrestricted["restricted_predictions_dropped"] == 0
    assert unrestricted["micro"]["chars"]["all"]["fp"] == 10 + 7


def test_reports_carry_no_entity_text_unless_asked():
    docs = [doc(SEED_TEXT, [NAME, BIRTH], [Span(9, 12, "PERSON_NAME")])]
    plain = json.dumps(evaluate(*docs))
    assert "Mustermann" not in plain and "1980" not in plain
    sensitive = evaluate(*docs, include_sensitive_text=True)
    leaked = sensitive["per_document"][0]["leaked_spans"]
    assert [(span["text"], span["conditions"]) for span in leaked] == [
        ("Max Mustermann", ("any_char", "any_char_scored")),
        ("01.02.1980", ("any_char", "any_char_scored", "entity_missed")),
    ]


def test_per_type_lists_every_gold_or_predicted_type_with_counts():
    results = evaluate(doc(SEED_TEXT, [NAME, BIRTH], [NAME, Span(0, 7, "PROFESSION")]))
    assert list(results["per_type"]) == ["DATE_OF_BIRTH", "PERSON_NAME", "PROFESSION"]
    profession = results["per_type"]["PROFESSION"]
    assert (profession["gold"], profession["predicted"]) == (0, 1)
    assert profession["nervaluate"]["strict"]["spurious"] == 1
    assert profession["nervaluate"]["strict"]["recall"] is None
    assert results["per_type"]["PERSON_NAME"]["chars_typed"]["f1"] == 1.0


@pytest.mark.parametrize(
    "span",
    [Span(5, 5, "AGE"), Span(6, 3, "AGE"), Span(-1, 2, "AGE"), Span(0, len(SEED_TEXT) + 1, "AGE")],
    ids=["empty", "reversed", "negative", "past the end"],
)
def test_it_rejects_spans_that_are_empty_or_outside_the_text(span: Span):
    with pytest.raises(ValueError, match="document 'd1'"):
        score_span_batches([doc(SEED_TEXT, [span], [])])
    with pytest.raises(ValueError, match="predicted span"):
        score_span_batches([doc(SEED_TEXT, [], [span])])


def test_documents_sharing_an_id_still_give_one_result_whatever_their_order():
    # Importers reject duplicate ids; the engine must stay deterministic anyway.
    leaking = doc("abcd", [Span(0, 2, "OTHER_PII")], [], document_id="x")
    safe = doc("abcd", [Span(0, 2, "OTHER_PII")], [Span(0, 2, "OTHER_PII")], document_id="x")
    assert evaluate(leaking, safe) == evaluate(safe, leaking)


def test_an_empty_corpus_has_null_measures_and_no_rows():
    results = evaluate_documents([])
    assert results["micro"]["chars"]["all"]["f1"] is None
    assert results["leakage"]["any_char"]["rate_all_documents"] is None
    assert results["per_document"] == [] and results["per_type"] == {}
