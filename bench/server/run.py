"""The server's scale-out benchmark: one span run scored by one Celery worker, then by two.

1. sets up a project with span gold for N documents (bench/spans' seeded corpus, through the import
   service) and one run with its predictions (through the ingest service, in batches of 1,000);
2. for 1 worker, then 2 workers (`celery -A evalproject worker --concurrency 1` each, on the same
   PostgreSQL and Redis), scores the run `--repeats` times (finalize, then rescore) and takes the wall
   time of each scoring job from its claim to its finish (`started_at` to `finished_at`);
3. prints the medians, their ratio (the target: two workers take at most 0.6x of one), and checks
   that every scoring stored byte-identical metrics (a canonical dump of the report, the metric
   values and the comparison rows in id order, hashed), the same as one more scoring by one worker that scores
   every chunk itself (the one-process result; not timed).

Run it through bench/server/run.sh, which starts throwaway PostgreSQL and Redis.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from annotations.importers.labels import LabelMap  # noqa: E402
from annotations.importers.sources import ArchiveLimits  # noqa: E402
from annotations.services import gold_import, project_create  # noqa: E402
from annotations.services.gold_read import read_spans  # noqa: E402
from bench.spans.corpus import write_corpus  # noqa: E402
from evalproject.celery import app as celery_app  # noqa: E402
from experiments.models import ExperimentRun  # noqa: E402
from experiments.prediction_batches import MAX_DOCUMENTS_PER_BATCH  # noqa: E402
from experiments.services.predictions import predictions_ingest  # noqa: E402
from experiments.services.runs import run_create  # noqa: E402
from metrics.models import ComparisonRow, MetricValue, Scoring  # noqa: E402
from metrics.services.scoring import scoring_request  # noqa: E402

TARGET_RATIO = 0.6


def set_up(n_documents: int, seed: int) -> tuple[ExperimentRun, object]:
    """The project with its span gold, and one open run with its predictions posted."""
    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = project_create(user=user, name="Server benchmark", slug=f"bench-server-{int(time.time())}")
    with tempfile.TemporaryDirectory(prefix="bench-server-") as folder:
        gold_path, predictions_path, n_gold, n_predicted = write_corpus(Path(folder), n_documents, seed)
        gold = read_spans(
            gold_path,
            display_name=gold_path.name,
            label_map=LabelMap.default(),
            annotator=None,
            limits=ArchiveLimits(),
            progress=lambda done: None,
        )
        gold_import(project=project, gold=gold, user=user, source=gold_path.name)
        del gold
        run = run_create(project=project, user=user, name="bench", kind="spans")
        batch: list[dict] = []
        with predictions_path.open(encoding="utf-8") as lines:
            for line in lines:
                document = json.loads(line)
                batch.append({"document_id": document["document_id"], "entities": document["entities"]})
                if len(batch) == MAX_DOCUMENTS_PER_BATCH:
                    predictions_ingest(run=run, documents=batch)
                    batch = []
        if batch:
            predictions_ingest(run=run, documents=batch)
    print(f"    {n_documents} documents, {n_gold} gold spans, {n_predicted} predicted", file=sys.stderr)
    return run, user


def start_workers(count: int, log_dir: Path, **env: str) -> list[subprocess.Popen]:
    """`count` workers of one process each (`env`: settings of theirs); returns once every one answers
    a ping."""
    processes = []
    names = [f"bench-{index}-{os.getpid()}" for index in range(count)]
    for name in names:
        log = (log_dir / f"{name}.log").open("a")
        processes.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "evalproject",
                    "worker",
                    "--concurrency",
                    "1",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "-n",
                    f"{name}@%h",
                ],
                cwd=ROOT,
                env={**os.environ, "LOG_LEVEL": "INFO", **env},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        replies = celery_app.control.ping(timeout=0.5) or []
        if all(any(name in host for reply in replies for host in reply) for name in names):
            return processes
    stop_workers(processes)
    raise SystemExit(f"the workers did not answer a ping within 60 s (logs in {log_dir})")


def stop_workers(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def score_once(run: ExperimentRun, user, *, rescore: bool) -> tuple[float, Scoring]:
    """Ask for a scoring and wait for its job; return the job's claim-to-finish seconds and the scoring."""
    job = scoring_request(run=run, user=user, rescore=rescore)
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.state in ("succeeded", "failed"):
            break
        time.sleep(0.2)
    if job.state != "succeeded":
        raise SystemExit(f"scoring job {job.pk} ended {job.state}: {job.errors}")
    return (job.finished_at - job.started_at).total_seconds(), Scoring.objects.get(job_id=job.pk)


def postgres_cpu_seconds() -> float | None:
    """CPU seconds PostgreSQL has used so far: its postmaster's and every backend's it reaped (None
    when its data folder is not known, outside run.sh)."""
    folder = os.environ.get("SERVICES_PGDATA")
    if not folder:
        return None
    postmaster = (Path(folder) / "postmaster.pid").read_text().split()[0]
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile: its time went to the postmaster's children
            continue
        if stat.parent.name == postmaster:
            ticks += sum(int(value) for value in fields[11:15])  # its own and its reaped children's
        elif fields[1] == postmaster:
            ticks += int(fields[11]) + int(fields[12])  # a backend still running
    return ticks / os.sysconf("SC_CLK_TCK")


def canonical_hash(scoring: Scoring) -> str:
    """sha256 of the scoring's report, metric values and comparison rows, dumped canonically."""
    digest = hashlib.sha256()
    report = Scoring.objects.filter(pk=scoring.pk).values_list("report", flat=True).get()
    report = {**report, "config": {**report["config"], "run": None}}
    digest.update(json.dumps(report, sort_keys=True).encode())
    values = MetricValue.objects.filter(scoring=scoring).order_by("scope", "scope_key", "name")
    for value in values.values_list("scope", "scope_key", "name", "value", "n", "ci_low", "ci_high", "ci"):
        digest.update(json.dumps(value, sort_keys=True).encode())
    # In id order, the order readers page in: it must be the positions' order, as one process writes.
    rows = ComparisonRow.objects.filter(scoring=scoring).order_by("id")
    for row in rows.values_list("position", "match_status", "is_correct", "columns").iterator(
        chunk_size=20000
    ):
        digest.update(json.dumps(row, sort_keys=True).encode())
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        parser.error("run through bench/server/run.sh: it needs PostgreSQL and Redis")

    print(f"==> setting up a span run of {args.documents} documents", file=sys.stderr)
    started = time.perf_counter()
    run, user = set_up(args.documents, args.seed)
    print(f"    set-up took {time.perf_counter() - started:.1f} s (not part of the measure)", file=sys.stderr)
    log_dir = Path(tempfile.mkdtemp(prefix="bench-server-logs-"))
    print(f"    the workers' logs: {log_dir}", file=sys.stderr)
    seconds: dict[int, list[float]] = {}
    hashes: set[str] = set()
    rescore = False
    for workers in (1, 2):
        celery_app.control.purge()
        processes = start_workers(workers, log_dir)
        try:
            for repeat in range(args.repeats):
                before = postgres_cpu_seconds()
                elapsed, scoring = score_once(run, user, rescore=rescore)
                database = None if before is None else postgres_cpu_seconds() - before
                rescore = True
                hashes.add(canonical_hash(scoring))
                seconds.setdefault(workers, []).append(elapsed)
                print(
                    f"    {workers} worker(s), scoring {repeat + 1}: {elapsed:.2f} s "
                    f"(load average {os.getloadavg()[0]:.2f}; PostgreSQL CPU {database or 0:.1f} s)",
                    file=sys.stderr,
                )
        finally:
            stop_workers(processes)
    # The reference: one worker scoring every chunk itself, as one process (not timed).
    celery_app.control.purge()
    processes = start_workers(1, log_dir)
    try:
        _, scoring = score_once(run, user, rescore=True)
        one_process = canonical_hash(scoring)
    finally:
        stop_workers(processes)
    one, two = (statistics.median(seconds[workers]) for workers in (1, 2))
    ratio = two / one
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        json.dumps(
            {
                "documents": args.documents,
                "repeats": args.repeats,
                "one_worker_seconds": [round(value, 2) for value in seconds[1]],
                "two_workers_seconds": [round(value, 2) for value in seconds[2]],
                "median_one_worker": round(one, 2),
                "median_two_workers": round(two, 2),
                "ratio": round(ratio, 3),
                "target_ratio": TARGET_RATIO,
                "metrics_identical": len(hashes) == 1,
                "identical_to_one_process": hashes == {one_process},
                "metrics_sha256": sorted(hashes),
                "workers_cpu_seconds": round(children.ru_utime + children.ru_stime, 1),
                "load_average": [round(value, 2) for value in os.getloadavg()],
            },
            indent=2,
        )
    )
    return 0 if hashes == {one_process} else 1


if __name__ == "__main__":
    raise SystemExit(main())
