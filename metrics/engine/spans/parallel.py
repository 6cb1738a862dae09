"""Scoring documents in worker processes, for callers that have many documents and spare cores.

Documents are independent and `DocumentScore`s travel as pickles, so chunks of documents can be
scored in other processes and aggregated as if scored here (see `aggregate`). Chunks go out and come
back in order, at most `processes * 2` chunks in flight, so memory stays bounded while a large
corpus streams through.
"""

from __future__ import annotations

import multiprocessing
import sys
from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from itertools import islice
from operator import attrgetter

from metrics.engine.spans.batch import BATCH_DOCUMENTS, score_document_batch
from metrics.engine.spans.score import DocumentScore, LeakedSpan
from metrics.engine.spans.types import DocumentSpans

_AS_TUPLE = attrgetter("start", "end", "entity_type")

# What crosses the process boundary, both ways, is tuples, bytes and strings: they pickle in C,
# where a slots dataclass per span would pickle in Python and eat the gain of the second core.
_DocumentTuple = tuple[str, str, list[tuple[int, int, str]], list[tuple[int, int, str]]]
_ScoreTuple = tuple[str, bytes, tuple[str, ...], tuple, tuple[tuple[str, int], ...]]


def _as_tuple(doc: DocumentSpans) -> _DocumentTuple:
    return (doc.document_id, doc.text, list(map(_AS_TUPLE, doc.gold)), list(map(_AS_TUPLE, doc.predicted)))


def _score_chunk(
    docs: list[_DocumentTuple], allowed_predicted_types: frozenset[str] | None
) -> list[_ScoreTuple]:
    scores = []
    documents = [DocumentSpans(*doc) for doc in docs]
    for score in score_document_batch(documents, allowed_predicted_types=allowed_predicted_types):
        leaked = tuple(tuple(span) for span in score.leaked_spans)
        scores.append((score.document_id, score.counts.tobytes(), score.types, leaked, score.dropped_by_type))
    return scores


def _from_tuple(item: _ScoreTuple) -> DocumentScore:
    document_id, counts, types, leaked, dropped = item
    return DocumentScore(
        document_id=document_id,
        counts=array("i", counts),
        types=tuple(map(sys.intern, types)),  # as score_document does: one string per type, not per row
        leaked_spans=tuple(LeakedSpan(*span) for span in leaked),
        dropped_by_type=dropped,
    )


def score_documents(
    docs: Iterable[DocumentSpans],
    *,
    allowed_predicted_types: frozenset[str] | None = None,
    processes: int = 1,
    chunk_size: int = 500,
) -> Iterator[DocumentScore]:
    """`score_document` for each document, in input order; with processes > 1 in worker processes.

    A ValueError from a document is raised here, as from `score_document`. With processes <= 1 no
    process is started. Workers come from a fork server where the platform has one, else are spawned.
    """
    if processes <= 1:
        documents = iter(docs)
        while chunk := list(islice(documents, BATCH_DOCUMENTS)):
            yield from score_document_batch(chunk, allowed_predicted_types=allowed_predicted_types)
        return
    # forkserver, not fork: a forked child runs the after-fork hooks libraries registered with
    # multiprocessing, and kombu's can hang on the parent's broker socket. The fork server is a
    # fresh process, so its children inherit none of our connections.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    score = partial(_score_chunk, allowed_predicted_types=allowed_predicted_types)
    documents = map(_as_tuple, docs)
    with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
        pending: deque[Future[list[DocumentScore]]] = deque()
        while True:
            while len(pending) < processes * 2:
                chunk = list(islice(documents, chunk_size))
                if not chunk:
                    break
                pending.append(pool.submit(score, chunk))
            if not pending:
                return
            yield from map(_from_tuple, pending.popleft().result())
