"""`Client`: one API token against one evalproject server, covering a pipeline's whole flow.

Requests that are safe to repeat are retried on a dropped connection or a 5xx answer, with exponential
backoff: every read, and every batch of predictions, which carries an `Idempotency-Key` kept across its
retries (the server stores a batch once however often it arrives, and answers a repeat with the first
answer). Creating a project or a run, an import and a finalize are sent once: a retry could do them twice.
"""

from __future__ import annotations

import csv
import json
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sized
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from evalproject_client.errors import JobFailed, JobTimeout, error_for
from evalproject_client.progress import ProgressBar
from evalproject_client.webhooks import verify_webhook

# A run or a job: its id, or the object the API answered with (a dict holding "id").
Ref = int | str | Mapping[str, Any]

DEFAULT_BATCH_SIZE = 500
MAX_BATCH_SIZE = 1000
JOB_END_STATES = ("succeeded", "failed")
# Fields of a project that are not settings (everything else given to create_project is a setting).
PROJECT_FIELDS = ("description", "strategy", "attributes", "entity_types")


@dataclass(frozen=True)
class GateResult:
    """The verdict of a quality gate: `passed` when every check passed; `checks` one result per check
    (`metric`, `observed`, `threshold`, `comparison`, `passed`, `reason`, ...)."""

    passed: bool
    checks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if not check.get("passed")]

    def __bool__(self) -> bool:
        return self.passed


def _id(ref: Ref) -> int:
    return int(ref["id"]) if isinstance(ref, Mapping) else int(ref)


def read_prompt_csv(path: str | Path) -> list[dict[str, str]]:
    """A prompt CSV (prompt, output_data_type, attribute_id, attribute_label) as a run's `prompts`."""
    with Path(path).open(encoding="utf-8-sig", newline="") as handle:
        return [dict(row) for row in csv.DictReader(handle)]


class Client:
    """The evalproject API for one token. Use it as a context manager, or call `close()`.

    `transport=` takes any httpx transport (e.g. `httpx.MockTransport` in tests). `progress=None` draws
    progress bars on stderr only when it is a terminal; True or False forces them on or off.
    """

    verify_webhook = staticmethod(verify_webhook)

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 120.0,
        retries: int = 5,
        backoff_seconds: float = 0.5,
        poll_seconds: float = 1.0,
        job_timeout: float = 3600.0,
        progress: bool | None = None,
    ) -> None:
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self.poll_seconds = poll_seconds
        self.job_timeout = job_timeout
        self.progress = progress
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # Projects and gold ------------------------------------------------------------------------------

    def create_project(self, slug: str, name: str, **settings: Any) -> dict[str, Any]:
        """Create a project (you become its manager). `description`, `strategy`, `attributes` and
        `entity_types` are the project's own fields; any other keyword is a setting
        (`edit_distance_match_threshold=0.85`, `number_format="de"`)."""
        body: dict[str, Any] = {"slug": slug, "name": name}
        for key in PROJECT_FIELDS:
            if key in settings:
                body[key] = settings.pop(key)
        extra = settings.pop("settings", None) or {}
        if extra or settings:
            body["settings"] = {**extra, **settings}
        return self._request("POST", "projects/", json=body).json()

    def project(self, slug: str) -> dict[str, Any]:
        return self._request("GET", f"projects/{slug}/", retry=True).json()

    def import_file(
        self,
        project: str,
        path: str | Path,
        format: str = "auto",
        wait: bool = True,
        *,
        label_map: Mapping[str, str] | None = None,
        annotator: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Upload a gold file (JSONL, CAS, EPPI, a zip of them) or a prompt CSV (the attribute schema)
        to project `project` and return its import job, once it ended when `wait` (JobFailed when it
        failed, with the file's problems)."""
        path = Path(path)
        data: dict[str, str] = {"format": format}
        if label_map:
            data["label_map"] = json.dumps(dict(label_map))
        if annotator:
            data["annotator"] = annotator
        with path.open("rb") as handle:
            job = self._request(
                "POST", f"projects/{project}/imports/", data=data, files={"file": (path.name, handle)}
            ).json()
        return self.wait_for_job(job, timeout=timeout) if wait else job

    # Jobs -------------------------------------------------------------------------------------------

    def job(self, job: Ref) -> dict[str, Any]:
        return self._request("GET", f"jobs/{_id(job)}/", retry=True).json()

    def wait_for_job(
        self,
        job: Ref,
        *,
        timeout: float | None = None,
        poll_seconds: float | None = None,
        progress: bool | None = None,
    ) -> dict[str, Any]:
        """Poll the job until it ends: return it when it succeeded, raise JobFailed when it failed, and
        JobTimeout after `timeout` seconds (default: the client's `job_timeout`)."""
        timeout = self.job_timeout if timeout is None else timeout
        poll = self.poll_seconds if poll_seconds is None else poll_seconds
        deadline = time.monotonic() + timeout
        bar = ProgressBar(f"job {_id(job)}", enabled=self.progress if progress is None else progress)
        try:
            while True:
                current = self.job(job)
                done = (current.get("progress") or {}).get("done", 0)
                total = (current.get("progress") or {}).get("total", 0)
                bar.update(done, total, current.get("status", ""))
                if current.get("status") in JOB_END_STATES:
                    break
                if time.monotonic() >= deadline:
                    raise JobTimeout(current, timeout)
                time.sleep(poll)
        finally:
            bar.close()
        if current["status"] == "failed":
            raise JobFailed(current)
        return current

    # Runs -------------------------------------------------------------------------------------------

    def create_run(
        self,
        project: str,
        name: str,
        kind: str,
        *,
        config: Mapping[str, Any] | str | Path | None = None,
        prompts: list[Any] | str | Path | None = None,
        model: str = "",
        provider: str = "",
        source: str = "llm",
        stage: str | None = None,
    ) -> dict[str, Any]:
        """Create an open run of `kind` ("spans" or "attributes") in project `project`.

        `config` is the pipeline's configuration, snapshotted with the run: a dict, YAML text, or the
        path of a YAML file. `prompts` the prompts it used: a list, or the path of a prompt CSV.
        """
        body: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "source": source,
            "model": model,
            "provider": provider,
        }
        if isinstance(config, Path):
            config = config.read_text(encoding="utf-8")
        if config is not None:
            body["config"] = dict(config) if isinstance(config, Mapping) else config
        if isinstance(prompts, (str, Path)):
            prompts = read_prompt_csv(prompts)
        if prompts is not None:
            body["prompts"] = list(prompts)
        if stage:
            body["stage"] = stage
        return self._request("POST", f"projects/{project}/runs/", json=body).json()

    def run(self, run: Ref) -> dict[str, Any]:
        return self._request("GET", f"runs/{_id(run)}/", retry=True).json()

    def runs(self, project: str, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every run of the project, newest first (filters: kind, status)."""
        yield from self._pages(f"projects/{project}/runs/", filters)

    def post_predictions(
        self,
        run: Ref,
        documents: Iterable[Mapping[str, Any]],
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        replace: bool = False,
        concurrency: int = 1,
        progress: bool | None = None,
    ) -> dict[str, int]:
        """Post `documents` (prediction JSONL objects, any iterable) in batches; return the summed counts
        (`created`, `unchanged`, `replaced`, `batches`).

        Each batch has its own Idempotency-Key, kept across its retries, so a batch is stored once. With
        `concurrency` > 1 that many batches are in flight at once.
        """
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE}")
        totals = {"created": 0, "unchanged": 0, "replaced": 0, "batches": 0}
        url = f"runs/{_id(run)}/predictions/"
        params = {"replace": "true"} if replace else None
        expected = len(documents) if isinstance(documents, Sized) else None
        bar = ProgressBar(
            f"run {_id(run)} predictions", enabled=self.progress if progress is None else progress
        )
        posted = 0

        def post(batch: list[Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
            headers = {"Idempotency-Key": uuid.uuid4().hex}
            answer = self._request(
                "POST", url, retry=True, params=params, json={"documents": batch}, headers=headers
            )
            return len(batch), answer.json()

        def add(outcome: tuple[int, dict[str, Any]]) -> None:
            nonlocal posted
            size, answer = outcome
            for name in ("created", "unchanged", "replaced"):
                totals[name] += int((answer.get("counts") or {}).get(name, 0))
            totals["batches"] += 1
            posted += size
            bar.update(posted, expected, "posted")

        try:
            if concurrency <= 1:
                for batch in _batches(documents, batch_size):
                    add(post(batch))
                return totals
            with futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
                in_flight: set[futures.Future] = set()
                for batch in _batches(documents, batch_size):
                    in_flight.add(pool.submit(post, batch))
                    if len(in_flight) >= 2 * concurrency:
                        done, in_flight = futures.wait(in_flight, return_when=futures.FIRST_COMPLETED)
                        for future in done:
                            add(future.result())
                for future in futures.as_completed(in_flight):
                    add(future.result())
            return totals
        finally:
            bar.close()

    def finalize(
        self,
        run: Ref,
        wait: bool = True,
        *,
        allow_empty: bool = False,
        timeout: float | None = None,
        progress: bool | None = None,
    ) -> dict[str, Any]:
        """Close the run and score it; return the scoring job, once it ended when `wait` (JobFailed
        when the scoring failed)."""
        body = {"allow_empty": True} if allow_empty else None
        return self._scoring("finalize", run, body, wait=wait, timeout=timeout, progress=progress)

    def rescore(
        self, run: Ref, wait: bool = True, *, timeout: float | None = None, progress: bool | None = None
    ) -> dict[str, Any]:
        """Score a scored or failed run again (after a gold or settings change); return the job."""
        return self._scoring("rescore", run, None, wait=wait, timeout=timeout, progress=progress)

    def _scoring(
        self,
        action: str,
        run: Ref,
        body: dict | None,
        *,
        wait: bool,
        timeout: float | None,
        progress: bool | None,
    ) -> dict[str, Any]:
        answer = self._request("POST", f"runs/{_id(run)}/{action}/", json=body).json()
        job = answer["job"]
        if wait:
            return self.wait_for_job(job, timeout=timeout, progress=progress)
        return self.job(job)

    # Results ----------------------------------------------------------------------------------------

    def metrics(self, run: Ref, *, scoring: int | None = None) -> dict[str, Any]:
        """The metrics document of the run's latest (or a given) scoring: metrics.json for an attribute
        run, results.json for a span run."""
        params = {"scoring": scoring} if scoring else None
        return self._request("GET", f"runs/{_id(run)}/metrics/", params=params, retry=True).json()

    def comparison_rows(self, run: Ref, *, page_size: int = 1000, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every comparison row of the run, page after page. Filters are the endpoint's query parameters
        (`attribute`, `match_status`, `document`, `entity_type`, ...)."""
        yield from self._pages(f"runs/{_id(run)}/comparison/", {"page_size": page_size, **filters})

    def compare(self, run_a: Ref, run_b: Ref, **options: Any) -> dict[str, Any]:
        """Run b against run a: metric deltas (b - a), changed rows and paired tests (options: `paired`,
        `resamples`, `seed`, `level`, `changed_limit`, `scoring_a`, `scoring_b`)."""
        params = {"a": _id(run_a), "b": _id(run_b), **{k: _query_value(v) for k, v in options.items()}}
        return self._request("GET", "runs/compare/", params=params, retry=True).json()

    def gate(self, run: Ref, thresholds: Mapping[str, Any] | list[Any] | str | Path) -> GateResult:
        """Hold the run's latest scoring against `thresholds` (the gate's threshold document
        `{"checks": [...]}`, its list of checks, or the path of its JSON file)."""
        if isinstance(thresholds, (str, Path)):
            thresholds = json.loads(Path(thresholds).read_text(encoding="utf-8"))
        body = {"checks": list(thresholds)} if isinstance(thresholds, list) else dict(thresholds)
        # The gate only reads: repeating it is harmless.
        answer = self._request("POST", f"runs/{_id(run)}/gate/", json=body, retry=True).json()
        return GateResult(passed=bool(answer["passed"]), checks=list(answer.get("checks") or []))

    def download_artefacts(self, run: Ref, path: str | Path, *, scoring: int | None = None) -> Path:
        """Save the run's artefacts.zip at `path` (a file, or a folder to hold `run-<id>-artefacts.zip`)."""
        destination = Path(path)
        if destination.is_dir():
            destination = destination / f"run-{_id(run)}-artefacts.zip"
        params = {"scoring": scoring} if scoring else None
        partial = destination.with_name(destination.name + ".part")
        with self._http.stream("GET", f"runs/{_id(run)}/artefacts.zip", params=params) as response:
            if response.status_code >= 400:
                response.read()
                self._raise(response)
            with partial.open("wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
        partial.replace(destination)
        return destination

    # Plumbing ---------------------------------------------------------------------------------------

    def _request(self, method: str, url: str, *, retry: bool = False, **kwargs: Any) -> httpx.Response:
        attempts = self.retries + 1 if retry else 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError:
                if last:
                    raise
            else:
                if response.status_code < 500 or last:
                    if response.status_code >= 400:
                        self._raise(response)
                    return response
            time.sleep(self.backoff_seconds * 2**attempt)
        raise AssertionError("unreachable")

    @staticmethod
    def _raise(response: httpx.Response) -> None:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        raise error_for(
            response.status_code, body, method=response.request.method, url=str(response.request.url)
        )

    def _pages(self, url: str, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        query = {key: _query_value(value) for key, value in params.items() if value is not None}
        page = self._request("GET", url, params=query, retry=True).json()
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            # `next` already holds the cursor and the filters. Only its path and query are followed: behind
            # a proxy the server may name itself by an inner host or scheme the client cannot reach.
            following = httpx.URL(page["next"])
            page = self._request(
                "GET", self._http.base_url.join(following.raw_path.decode()), retry=True
            ).json()


def _batches(documents: Iterable[Mapping[str, Any]], size: int) -> Iterator[list[Mapping[str, Any]]]:
    batch: list[Mapping[str, Any]] = []
    for document in documents:
        batch.append(document)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
