"""Scoring documents in worker processes, for callers that have many documents and spare cores.

Documents are independent and `DocumentScore`s travel as pickles, so chunks of documents can be
scored in other processes and aggregated as if scored here (see `aggregate`). Chunks go out and come
back in order, at most `processes * 2` chunks in flight, so memory stays bounded while a large
corpus streams through.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from itertools import islice

from metrics.engine.spans.document import score_document
from metrics.engine.spans.score import DocumentScore
from metrics.engine.spans.types import DocumentSpans


def _score_chunk(
    docs: list[DocumentSpans], allowed_predicted_types: frozenset[str] | None
) -> list[DocumentScore]:
    return [score_document(doc, allowed_predicted_types=allowed_predicted_types) for doc in docs]


def score_documents(
    docs: Iterable[DocumentSpans],
    *,
    allowed_predicted_types: frozenset[str] | None = None,
    processes: int = 1,
    chunk_size: int = 500,
) -> Iterator[DocumentScore]:
    """`score_document` for each document, in input order; with processes > 1 in worker processes.

    A ValueError from a document is raised here, as from `score_document`. With processes <= 1 no
    process is started. Workers are forked where the platform allows it (no re-import of the caller).
    """
    if processes <= 1:
        for doc in docs:
            yield score_document(doc, allowed_predicted_types=allowed_predicted_types)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    score = partial(_score_chunk, allowed_predicted_types=allowed_predicted_types)
    documents = iter(docs)
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
            yield from pending.popleft().result()
