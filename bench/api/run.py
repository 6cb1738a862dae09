"""Benchmark of the team server's main path: post 200,000 attribute predictions, score, read pages.

What it does, against PostgreSQL, Redis, gunicorn (2 workers) and one Celery worker, all local:
1. sets up a project with 10 attributes and gold for 20,000 documents (the import service, COPY);
2. posts 20,000 prediction documents x 10 attributes (~2 KB contexts) with the Python client in
   batches of 500, finalizes the run and waits for its metrics: the end-to-end time;
3. reads 50 random filtered pages of comparison rows (attribute x match_status, keyset pages of 100):
   latency p50 / p95 / p99;
4. logs in to the web pages (session) and reads the run's page and 50 random filtered comparison
   pages of it (`/runs/{id}/?attribute=&match_status=`): latency p50 / p95 / p99.

Run it through bench/api/run.sh, which starts the services. Targets on a 2-core machine: end to end
<= 90 s, API page p95 <= 100 ms, web run page and filtered web page p95 <= 150 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from evalproject_client import Client  # noqa: E402

from annotations.models import Attribute  # noqa: E402
from annotations.services import api_token_create, attributes_upsert, gold_import, project_create  # noqa: E402
from annotations.services.gold_read import read_attribute_gold  # noqa: E402
from metrics.engine.attributes.types import AttributeSpec, AttributeType  # noqa: E402

ATTRIBUTES = [
    ("a01", "Randomised", AttributeType.BOOL),
    ("a02", "Blinded", AttributeType.BOOL),
    ("a03", "Placebo controlled", AttributeType.BOOL),
    ("a04", "Country", AttributeType.STRING),
    ("a05", "Setting", AttributeType.STRING),
    ("a06", "Primary outcome", AttributeType.STRING),
    ("a07", "Participants", AttributeType.INTEGER),
    ("a08", "Arms", AttributeType.INTEGER),
    ("a09", "Mean age", AttributeType.FLOAT),
    ("a10", "Follow-up months", AttributeType.FLOAT),
]
COUNTRIES = ["Kenya", "Uganda", "Peru", "Vietnam", "Ghana", "Nepal", "Brazil", "India", "Chile", "Laos"]
SETTINGS = ["primary care", "hospital", "community", "school", "outpatient clinic"]
OUTCOMES = ["mortality", "HbA1c", "time to recovery", "pain score", "blood pressure", "weight"]
FILLER = (
    "The trial followed the published protocol and reported adverse events in line with the guideline. "
    "Data were analysed by intention to treat, with sensitivity analyses for missing outcomes. "
)
STATUSES = [
    "exact_match",
    "near_match",
    "missing_prediction",
    "extraction_error_good_source",
    "extraction_error_bad_source",
]


def gold_values(rng: random.Random) -> dict:
    return {
        "a01": rng.random() < 0.6,
        "a02": rng.random() < 0.4,
        "a03": rng.random() < 0.3,
        "a04": rng.choice(COUNTRIES),
        "a05": rng.choice(SETTINGS),
        "a06": rng.choice(OUTCOMES),
        "a07": rng.randint(20, 5000),
        "a08": rng.randint(2, 4),
        "a09": round(rng.uniform(18, 80), 1),
        "a10": float(rng.choice([3, 6, 12, 24])),
    }


def context_of(values: dict) -> str:
    head = (
        f"Methods. {'Randomised' if values['a01'] else 'Non-randomised'} trial in {values['a04']} "
        f"({values['a05']}); {values['a08']} arms; {values['a07']} participants, mean age {values['a09']} years, "
        f"followed for {values['a10']} months. Primary outcome: {values['a06']}. "
    )
    return head + FILLER * 9  # about 2 KB


def predicted(rng: random.Random, values: dict) -> list[dict]:
    annotations = []
    for attribute_id, value in values.items():
        roll = rng.random()
        if roll < 0.03:
            continue  # no value: a missing prediction
        if roll < 0.85:
            guess = value
        elif isinstance(value, bool):
            guess = not value
        elif isinstance(value, str):
            guess = value.lower() if roll < 0.93 else rng.choice(COUNTRIES)
        elif isinstance(value, int):
            guess = value + rng.randint(1, 9)
        else:
            guess = round(value + 1.5, 1)
        annotations.append(
            {
                "attribute_id": attribute_id,
                "output_data": guess,
                "additional_text": str(value),
                "reasoning": "From the methods.",
            }
        )
    return annotations


def set_up(n_documents: int, seed: int) -> tuple[str, str, list[dict]]:
    """Project, schema, gold (through the import service) and the predictions to post."""
    user, _ = get_user_model().objects.get_or_create(username="bench")
    slug = f"bench-{int(time.time())}"
    project = project_create(user=user, name="API benchmark", slug=slug)
    attributes_upsert(
        project=project,
        specs=[
            AttributeSpec(attribute_id=a, label=label, type=kind, prompt=f"What is the {label}?")
            for a, label, kind in ATTRIBUTES
        ],
    )
    rng = random.Random(seed)
    documents = []
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as gold:
        for index in range(n_documents):
            values = gold_values(rng)
            document_id = f"doc-{index:06d}"
            attributes = {a: {"output_data": v, "additional_text": str(v)} for a, v in values.items()}
            gold.write(
                json.dumps({"document_id": document_id, "name": f"Trial {index}", "attributes": attributes})
                + "\n"
            )
            documents.append(
                {
                    "document_id": document_id,
                    "context": context_of(values),
                    "annotations": predicted(rng, values),
                    "input_tokens": rng.randint(600, 900),
                    "output_tokens": rng.randint(80, 200),
                    "cost_usd": 0.0012,
                    "timings": {"llm_extraction": round(rng.uniform(0.5, 3.0), 3)},
                }
            )
    types = dict(Attribute.objects.filter(project=project).values_list("attribute_id", "type"))
    gold_set = read_attribute_gold(
        Path(gold.name),
        display_name="bench-gold.jsonl",
        eppi=False,
        attribute_types={k: AttributeType(v) for k, v in types.items()},
    )
    gold_import(project=project, gold=gold_set, user=user, source="bench-gold.jsonl")
    os.unlink(gold.name)
    key = api_token_create(user=user, name="bench")[1]
    return slug, key, documents


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_services(port: int, log_dir: Path) -> list[subprocess.Popen]:
    env = dict(os.environ)
    gunicorn = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalproject.wsgi:application", "--workers", "2", "--bind", f"127.0.0.1:{port}",
         "--timeout", "300", "--access-logfile", "-"],
        cwd=ROOT, env=env, stdout=(log_dir / "gunicorn.log").open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalproject", "worker", "--pool=solo", "--loglevel=WARNING",
         "--without-gossip", "--without-mingle", "-n", f"bench-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=(log_dir / "worker.log").open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health/", timeout=2).status_code < 500:
                return [gunicorn, worker]
        except httpx.TransportError:
            time.sleep(0.3)
    raise RuntimeError(f"gunicorn did not answer within 60 s; see {log_dir}/gunicorn.log")


def web_session(base: str, username: str) -> httpx.Client:
    """An httpx client logged in to the pages through /accounts/login/ (a password is set for it)."""
    password = secrets.token_urlsafe(16)
    user = get_user_model().objects.get(username=username)
    user.set_password(password)
    user.save(update_fields=["password"])
    http = httpx.Client(base_url=base, timeout=60)
    http.get("/accounts/login/")
    token = http.cookies["csrftoken"]
    response = http.post(
        "/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    assert response.status_code == 302, response.text[:500]
    return http


def timed_pages(http: httpx.Client, paths: list[str]) -> list[float]:
    latencies = []
    for path in paths:
        started = time.perf_counter()
        response = http.get(path)
        latencies.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return latencies


def latency_summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(latencies), 1),
        "p95": round(percentile(latencies, 0.95), 1),
        "p99": round(percentile(latencies, 0.99), 1),
    }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def api_page_latencies(base: str, key: str, run: dict, pages: int, rng: random.Random) -> list[float]:
    """Milliseconds per page of `pages` random filtered pages of the run's comparison over the API."""
    print(f"==> reading {pages} random filtered pages", file=sys.stderr)
    latencies = []
    headers = {"Authorization": f"Token {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
        http.get(f"/api/v1/runs/{run['id']}/comparison/", params={"page_size": 100})  # warm the workers
        for _ in range(pages):
            params = {"page_size": 100, "attribute": rng.choice(ATTRIBUTES)[0]}
            if rng.random() < 0.7:
                params["match_status"] = rng.choice(STATUSES)
            started = time.perf_counter()
            response = http.get(f"/api/v1/runs/{run['id']}/comparison/", params=params)
            latencies.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
    return latencies


def web_page_latencies(
    base: str, run: dict, pages: int, rng: random.Random
) -> tuple[list[float], list[float]]:
    """Milliseconds per page: the web run page `pages` times, then `pages` random filtered run pages."""
    print(f"==> reading the web run page and {pages} filtered web pages", file=sys.stderr)
    web = web_session(base, "bench")
    try:
        run_page = f"/runs/{run['id']}/"
        web.get(run_page)  # warm the workers
        run_page_latencies = timed_pages(web, [run_page] * pages)
        filtered = []
        for _ in range(pages):
            params = {"attribute": rng.choice(ATTRIBUTES)[0]}
            if rng.random() < 0.7:
                params["match_status"] = rng.choice(STATUSES)
            filtered.append(f"{run_page}?{urlencode(params)}")
        return run_page_latencies, timed_pages(web, filtered)
    finally:
        web.close()


def stop_services(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=2, help="batches in flight at once")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        parser.error("run through bench/api/run.sh: it needs PostgreSQL and Redis")

    print(
        f"==> setting up {args.documents} documents x {len(ATTRIBUTES)} attributes of gold", file=sys.stderr
    )
    setup_start = time.perf_counter()
    slug, key, documents = set_up(args.documents, args.seed)
    print(
        f"    set-up took {time.perf_counter() - setup_start:.1f} s (not part of the measure)",
        file=sys.stderr,
    )
    port = free_port()
    log_dir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    processes = start_services(port, log_dir)
    base = f"http://127.0.0.1:{port}"
    try:
        with Client(base, key, timeout=600, poll_seconds=0.25, job_timeout=900) as client:
            print("==> posting, scoring, reading the metrics", file=sys.stderr)
            start = time.perf_counter()
            run = client.create_run(
                slug, name="bench", kind="attributes", config={"model": "bench"}, model="bench"
            )
            counts = client.post_predictions(
                run, documents, batch_size=args.batch_size, concurrency=args.concurrency
            )
            posted = time.perf_counter()
            client.finalize(run)
            scored = client.run(run)
            metrics = client.metrics(run)
            end = time.perf_counter()
            assert counts["created"] == args.documents, counts
            assert len(metrics["attributes"]) == len(ATTRIBUTES)

            # One random sequence for the API pages, then the web pages, as before the split.
            rng = random.Random(args.seed)
            latencies = api_page_latencies(base, key, run, args.pages, rng)
            run_page_latencies, filtered_latencies = web_page_latencies(base, run, args.pages, rng)
    finally:
        stop_services(processes)

    n_predictions = sum(len(document["annotations"]) for document in documents)
    result = {
        "documents": args.documents,
        "predictions": n_predictions,
        "batch_size": args.batch_size,
        "concurrency": args.concurrency,
        "post_seconds": round(posted - start, 2),
        "score_and_read_seconds": round(end - posted, 2),
        "end_to_end_seconds": round(end - start, 2),
        "predictions_per_second_posting": round(n_predictions / (posted - start)),
        "predictions_per_second_end_to_end": round(n_predictions / (end - start)),
        "scoring_job": scored["progress"],
        "page_latency_ms": latency_summary(latencies),
        "web_run_page_latency_ms": latency_summary(run_page_latencies),
        "web_filtered_page_latency_ms": latency_summary(filtered_latencies),
        "logs": str(log_dir),
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
