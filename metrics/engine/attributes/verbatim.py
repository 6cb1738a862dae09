"""Verbatim grounding: how well a supporting snippet is found in the context the model read.

The rules of docs/semantics.md section 2 ("Verbatim grounding"). An empty side scores 0, never null:
no snippet means no grounding. A longer snippet that occurs as a substring scores 100 too: what
partial_ratio gives, only faster. `settled_pct_of_collapsed` applies every rule but the last,
`round(rapidfuzz.fuzz.partial_ratio(snippet, context), 2)`, which `FuzzyScores` computes.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from rapidfuzz import fuzz, process

# Below this length a fuzzy partial ratio is meaningless: "12" is "found" in any text with a 1 and a 2.
SHORT_SNIPPET_LENGTH = 4
_DIGITS = frozenset("0123456789")


def _is_digit(text: str, index: int) -> bool:
    return 0 <= index < len(text) and text[index] in _DIGITS


def _number_edge(text: str, index: int, step: int) -> bool:
    """True when the character at `index` continues a number: a digit, or a separator before a digit."""
    if not 0 <= index < len(text):
        return False
    char = text[index]
    return char in _DIGITS or (char in ".," and _is_digit(text, index + step))


def occurs_on_number_boundaries(digits: str, text: str) -> bool:
    """True when `digits` occurs in `text` as a whole number: "12" is in "n=12." but not in "120" or "1.12"."""
    position = text.find(digits)
    while position != -1:
        end = position + len(digits)
        if not _number_edge(text, position - 1, -1) and not _number_edge(text, end, 1):
            return True
        position = text.find(digits, position + 1)
    return False


def settled_pct_of_collapsed(collapsed_snippet: str, collapsed_context: str) -> float | None:
    """The score of a whitespace-collapsed snippet by the rules that need no `partial_ratio`, or
    None when only `partial_ratio` can tell (a caller scoring the same snippets against many
    contexts collapses each once)."""
    if not collapsed_snippet or not collapsed_context:
        return 0.0
    if len(collapsed_snippet) < SHORT_SNIPPET_LENGTH and _DIGITS.issuperset(collapsed_snippet):
        return 100.0 if occurs_on_number_boundaries(collapsed_snippet, collapsed_context) else 0.0
    if collapsed_snippet in collapsed_context:
        return 100.0
    return None


class FuzzyScores:
    """`round(fuzz.partial_ratio(snippet, context), 2)` of many pairs, computed by a helper thread
    while the caller goes on with other work.

    The fuzzy scores are a third of the time of scoring a run (tens of microseconds each on a 2 KB
    context). rapidfuzz's `process.cpdist` runs the same scorer over pairs without the GIL, so a
    thread scoring batches of pairs runs beside the caller's Python loop on a second core, with no
    process to start and no memory copied; on one core the work is the same as before. The thread
    calls it with `workers=2` (`_CPDIST_WORKERS`): with one worker, a batch beside a busy Python
    thread took twice as long as alone (rapidfuzz's single-worker path keeps needing the GIL, and
    the caller's loop holds it), so the caller ended up waiting for the helper (bench/extraction's
    README has the figures). The scores are identical to one `partial_ratio` call per pair (float64
    results, the same C++ scorer; a test holds the two together).

    `add` returns a pair's position; `scores()` waits for every batch and returns all scores in
    order. Until a first batch is full no thread is started, so small runs stay on the caller's
    thread. Always `close()` (or `scores()`), so that no thread outlives the caller: a process with
    a thread must not fork.
    """

    BATCH = 2_000

    def __init__(self, batch: int = BATCH) -> None:
        self._batch = batch
        self._snippets: list[str] = []
        self._contexts: list[str] = []
        self._done: list[Future[list[float]] | list[float]] = []
        self._executor: ThreadPoolExecutor | None = None

    def add(self, collapsed_snippet: str, collapsed_context: str) -> int:
        # Every batch handed on so far is full.
        position = len(self._done) * self._batch + len(self._snippets)
        self._snippets.append(collapsed_snippet)
        self._contexts.append(collapsed_context)
        if len(self._snippets) >= self._batch:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fuzzy-scores")
            self._done.append(self._executor.submit(_score_pairs, self._snippets, self._contexts))
            self._snippets, self._contexts = [], []
        return position

    def scores(self) -> list[float]:
        try:
            if self._snippets:
                self._done.append(_score_pairs(self._snippets, self._contexts))
                self._snippets, self._contexts = [], []
            scores: list[float] = []
            for batch in self._done:
                scores.extend(batch if isinstance(batch, list) else batch.result())
            return scores
        finally:
            self.close()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


# See FuzzyScores: rapidfuzz's own threads score the pairs with the GIL released throughout.
_CPDIST_WORKERS = 2


def _score_pairs(snippets: list[str], contexts: list[str]) -> list[float]:
    scores = process.cpdist(
        snippets, contexts, scorer=fuzz.partial_ratio, dtype=np.float64, workers=_CPDIST_WORKERS
    )
    return [round(score, 2) for score in scores.tolist()]
