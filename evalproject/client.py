"""A Python client for the evalproject API, for pipelines and notebooks. Built on httpx.

    from evalproject.client import Client

    with Client("https://eval.example.org", token="...") as client:
        run = client.create_run("letters", name="gpt-4o-mini v3", kind="attributes",
                                config=open("config.yaml").read(), prompts=prompts, model="gpt-4o-mini")
        client.post_predictions(run, documents)          # batches of 500, safe to retry
        client.finalize(run)
        client.wait(run)                                 # a progress bar on a terminal
        print(client.metrics(run))
        for row in client.comparison(run, match_status="extraction_error_good_source"):
            ...
        client.download_artefacts(run, "run-artefacts.zip")

Every batch of predictions carries an Idempotency-Key; a connection error or a 5xx answer is retried
with the same key, so a batch is stored once however often it is sent. `transport=` takes any httpx
transport, e.g. `httpx.WSGITransport(app=...)` to talk to the app in-process.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from concurrent import futures
from pathlib import Path
from typing import Any

import httpx

RunRef = int | Mapping[str, Any]
DEFAULT_BATCH_SIZE = 500
FINISHED_STATUSES = ("scored", "failed")


class ApiError(Exception):
    """An answer the client cannot go on from: its status code and the server's JSON body (or text)."""

    def __init__(self, status_code: int, body: Any, method: str, url: str):
        self.status_code = status_code
        self.body = body
        detail = body.get("detail") if isinstance(body, dict) else body
        super().__init__(f"{method} {url} -> {status_code}: {detail}")


class RunFailed(Exception):
    """`wait` found the run's scoring failed; `errors` are the job's."""

    def __init__(self, run: dict):
        self.run = run
        self.errors = (run.get("progress") or {}).get("errors") or []
        super().__init__(f"run {run['id']} failed: {'; '.join(map(str, self.errors)) or 'no reason given'}")


def _run_id(run: RunRef) -> int:
    return int(run["id"]) if isinstance(run, Mapping) else int(run)


def _batches(documents: Iterable[dict], size: int) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for document in documents:
        batch.append(document)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class Client:
    """One API token against one server. Use it as a context manager, or call `close()`."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 120.0,
        retries: int = 5,
        backoff_seconds: float = 0.5,
    ) -> None:
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            transport=transport,
            timeout=timeout,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # Plumbing -------------------------------------------------------------------------------------

    def _request(self, method: str, url: str, *, retry: bool = False, **kwargs: Any) -> httpx.Response:
        """One request; with `retry`, connection errors and 5xx answers are retried with backoff.

        Only idempotent requests are retried: reads, and posts that carry an Idempotency-Key.
        """
        attempts = self.retries + 1 if retry else 1
        for attempt in range(attempts):
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError:
                if attempt == attempts - 1:
                    raise
            else:
                if response.status_code < 500 or attempt == attempts - 1:
                    return self._checked(response)
            time.sleep(self.backoff_seconds * 2**attempt)
        raise AssertionError("unreachable")

    @staticmethod
    def _checked(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = response.text
            raise ApiError(response.status_code, body, response.request.method, str(response.request.url))
        return response

    # Runs -----------------------------------------------------------------------------------------

    def create_run(
        self,
        project: str,
        *,
        name: str,
        kind: str,
        source: str = "llm",
        config: Mapping[str, Any] | str | None = None,
        prompts: list[Any] | None = None,
        model: str = "",
        provider: str = "",
        stage: str | None = None,
    ) -> dict:
        """Create an open run in project `project` (its slug); the answer is the run."""
        body: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "source": source,
            "model": model,
            "provider": provider,
        }
        if config is not None:
            body["config"] = dict(config) if isinstance(config, Mapping) else config
        if prompts is not None:
            body["prompts"] = list(prompts)
        if stage:
            body["stage"] = stage
        return self._request("POST", f"projects/{project}/runs/", json=body).json()

    def run(self, run: RunRef) -> dict:
        return self._request("GET", f"runs/{_run_id(run)}/", retry=True).json()

    def runs(self, project: str, **filters: Any) -> Iterator[dict]:
        yield from self._pages(f"projects/{project}/runs/", filters)

    def post_predictions(
        self,
        run: RunRef,
        documents: Iterable[dict],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        replace: bool = False,
        concurrency: int = 1,
    ) -> dict:
        """Post `documents` in batches; return the summed counts (created, unchanged, replaced).

        Each batch has its own Idempotency-Key, kept across its retries. With `concurrency` > 1 that
        many batches are in flight at once (the server writes batches of one run side by side).
        """
        if not 1 <= batch_size <= 1000:
            raise ValueError("batch_size must be between 1 and 1000")
        totals = {"created": 0, "unchanged": 0, "replaced": 0, "batches": 0}
        url = f"runs/{_run_id(run)}/predictions/" + ("?replace=true" if replace else "")

        def post(batch: list[dict]) -> dict:
            key = uuid.uuid4().hex
            return self._request(
                "POST", url, retry=True, json={"documents": batch}, headers={"Idempotency-Key": key}
            ).json()

        def add(answer: dict) -> None:
            for name in ("created", "unchanged", "replaced"):
                totals[name] += answer["counts"][name]
            totals["batches"] += 1

        if concurrency <= 1:
            for batch in _batches(documents, batch_size):
                add(post(batch))
            return totals
        with futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
            in_flight: set = set()
            for batch in _batches(documents, batch_size):
                in_flight.add(pool.submit(post, batch))
                if len(in_flight) >= 2 * concurrency:
                    done, in_flight = futures.wait(in_flight, return_when=futures.FIRST_COMPLETED)
                    for future in done:
                        add(future.result())
            for future in in_flight:
                add(future.result())
        return totals

    def finalize(self, run: RunRef) -> dict:
        """Close the run and queue its scoring; the answer names the job."""
        return self._request("POST", f"runs/{_run_id(run)}/finalize/").json()

    def rescore(self, run: RunRef) -> dict:
        return self._request("POST", f"runs/{_run_id(run)}/rescore/").json()

    def wait(
        self,
        run: RunRef,
        *,
        timeout: float | None = None,
        poll_seconds: float = 1.0,
        progress: bool | None = None,
    ) -> dict:
        """Poll until the run is scored (return it) or failed (raise RunFailed); TimeoutError after `timeout`.

        A progress bar goes to stderr when it is a terminal (or when `progress` is True).
        """
        show = sys.stderr.isatty() if progress is None else progress
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            current = self.run(run)
            if show:
                _draw_progress(current)
            if current["status"] in FINISHED_STATUSES:
                if show:
                    sys.stderr.write("\n")
                if current["status"] == "failed":
                    raise RunFailed(current)
                return current
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {current['id']} is still {current['status']} after {timeout} s")
            time.sleep(poll_seconds)

    # Results --------------------------------------------------------------------------------------

    def metrics(self, run: RunRef, *, scoring: int | None = None) -> dict:
        """metrics.json (attribute runs) or results.json (span runs) of the latest or a given scoring."""
        params = {"scoring": scoring} if scoring else None
        return self._request("GET", f"runs/{_run_id(run)}/metrics/", params=params, retry=True).json()

    def comparison(self, run: RunRef, *, page_size: int = 1000, **filters: Any) -> Iterator[dict]:
        """Every comparison row, page after page (filters: attribute, match_status, document, ...)."""
        yield from self._pages(f"runs/{_run_id(run)}/comparison/", {"page_size": page_size, **filters})

    def compare(self, a: RunRef, b: RunRef, **options: Any) -> dict:
        return self._request(
            "GET", "runs/compare/", params={"a": _run_id(a), "b": _run_id(b), **options}, retry=True
        ).json()

    def download_artefacts(self, run: RunRef, destination: str | Path, *, scoring: int | None = None) -> Path:
        """Save the run's artefacts.zip to `destination` (a file path)."""
        destination = Path(destination)
        params = {"scoring": scoring} if scoring else None
        with self._http.stream("GET", f"runs/{_run_id(run)}/artefacts.zip", params=params) as response:
            if response.status_code >= 400:
                response.read()
                self._checked(response)
            with destination.open("wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
        return destination

    def _pages(self, url: str, params: Mapping[str, Any]) -> Iterator[dict]:
        query = {key: _query_value(value) for key, value in params.items() if value is not None}
        page = self._request("GET", url, params=query, retry=True).json()
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            # `next` is absolute and already holds the cursor and the filters.
            page = self._request("GET", page["next"], retry=True).json()


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _draw_progress(run: dict, width: int = 30) -> None:
    progress = run.get("progress") or {}
    done, total = progress.get("done", 0), progress.get("total", 0)
    filled = int(width * done / total) if total else 0
    sys.stderr.write(
        f"\rrun {run['id']} {run['status']:<8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
    )
    sys.stderr.flush()
