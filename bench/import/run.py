"""Import 100,000 gold documents through the job path, and the same rows with plain COPY; compare.

    uv run python bench/import/run.py [--documents 100000] [--keep]

Needs PostgreSQL: DATABASE_URL names a server (and a database to connect to first) where we may
create databases. `bench/import/run.sh` starts a throwaway server with scripts/lib/services.sh
(`services_start`, which exports DATABASE_URL) and runs this script. A fresh database is created
for the run and dropped at the end (unless --keep).

What is measured:
1. The job path: a seeded JSONL file (~1 KB of text and 10 spans per document) is stored as an
   import job's input, and `import_job_run` (what the Celery task calls) runs in a child process,
   as a worker would: read and check everything, then write documents, the version's document list
   and the spans in one transaction. Wall time of the import inside the child, and the child's peak
   resident memory (ru_maxrss).
2. Plain COPY: the same rows, prepared in memory beforehand (not timed), loaded into the same tables
   for a fresh project with psycopg's COPY: documents, the version, its document list, the spans.
Prints both times and the ratio. Targets: the job within 3x of plain COPY, peak memory <= 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SPANS_PER_DOCUMENT = 10
WORDS = [
    "der",
    "Patient",
    "wurde",
    "am",
    "stationär",
    "aufgenommen",
    "Befund",
    "unauffällig",
    "Therapie",
    "mit",
    "Ibuprofen",
    "400",
    "mg",
    "Kontrolle",
    "in",
    "zwei",
    "Wochen",
    "Anamnese",
    "keine",
    "Allergien",
    "bekannt",
    "Blutdruck",
    "120/80",
    "mmHg",
    "Labor",
    "o.B.",
    "Diagnose",
    "Entlassung",
    "in",
    "gutem",
    "Allgemeinzustand",
    "Empfehlung",
    "Weiterbehandlung",
    "durch",
    "Hausarzt",
]
ENTITIES = [
    ("Max Mustermann", "PatientName"),
    ("01.02.1980", "DateOfBirth"),
    ("12.03.2024", "OTHER_DATE"),
    ("Klinikum Nord", "ORGANIZATION"),
    ("0171/1234567", "PHONE"),
    ("Hauptstraße 5, 10115 Berlin", "ADDRESS"),
    ("47 Jahre", "age"),
    ("ID-99812", "patientid"),
]


def write_corpus(path: Path, documents: int, seed: int = 7) -> int:
    """A JSONL gold file: per document ~1 KB of text with exactly 10 spans. Returns the span count."""
    rng = random.Random(seed)
    fillers = [" ".join(rng.choices(WORDS, k=rng.randint(10, 14))) for _ in range(300)]
    spans = 0
    with path.open("w", encoding="utf-8") as file:
        for index in range(documents):
            pieces, entities, offset = [], [], 0
            for _ in range(SPANS_PER_DOCUMENT):
                filler = rng.choice(fillers) + " "
                pieces.append(filler)
                offset += len(filler)
                text, label = rng.choice(ENTITIES)
                entities.append({"start": offset, "end": offset + len(text), "entity_type": label})
                pieces.append(text)
                offset += len(text)
                pieces.append(". ")
                offset += 2
            record = {"document_id": f"doc-{index:06d}", "text": "".join(pieces), "entities": entities}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
            spans += len(entities)
    return spans


def database_url_for(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def admin_execute(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgres://", "postgresql://", 1), autocommit=True) as connection:
        connection.execute(statement)


def setup_django(database_url: str, media_root: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["MEDIA_ROOT"] = str(media_root)
    os.environ.setdefault("DEBUG", "1")
    os.environ.pop("CELERY_BROKER_URL", None)  # the task is run directly below, as a worker runs it
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalproject.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def run_worker(job_id: int) -> None:
    """Child process: run one import job exactly as the Celery task does; print its duration."""
    from annotations.services import import_job_run

    started = time.perf_counter()
    state = import_job_run(job_id=job_id)
    print(json.dumps({"state": state, "seconds": time.perf_counter() - started}))


def prepare_job(gold_path: Path) -> int:
    from django.contrib.auth import get_user_model
    from django.core.files import File

    from annotations.models import Job, JobKind
    from annotations.services import project_create

    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = project_create(user=user, name="Import bench (job)", slug=f"bench-job-{os.getpid()}")
    job = Job(
        kind=JobKind.IMPORT,
        project=project,
        created_by=user,
        params={"format": "jsonl", "file_name": "gold.jsonl"},
    )
    with gold_path.open("rb") as stream:
        job.input_file.save("bench/gold.jsonl", File(stream), save=False)
    job.save()
    return job.pk


def plain_copy(gold_path: Path) -> tuple[float, int, int]:
    """Load the same rows with COPY for a fresh project; (seconds, documents, spans). Parsing is not timed."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotations.importers.labels import LabelMap
    from annotations.models import Document, GoldSpan, GoldVersion, GoldVersionDocument
    from annotations.services import project_create

    labels = LabelMap.default()
    documents, spans = [], []
    with gold_path.open(encoding="utf-8") as file:
        for line in file:
            record = json.loads(line)
            text = record["text"]
            documents.append((record["document_id"], text, Document.hash_text(text)))
            spans.append(
                [
                    (e["start"], e["end"], labels.lookup(e["entity_type"]) or "OTHER_PII", e["entity_type"])
                    for e in record["entities"]
                ]
            )
    user = get_user_model().objects.get(username="bench")
    project = project_create(user=user, name="Import bench (COPY)", slug=f"bench-copy-{os.getpid()}")
    quote = connection.ops.quote_name
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        now = timezone.now()
        with cursor.copy(
            f"COPY {quote(Document._meta.db_table)} (project_id, external_id, name, text, content_hash, metadata, created_at) FROM STDIN"
        ) as copy:
            for external_id, text, content_hash in documents:
                copy.write_row((project.pk, external_id, "", text, content_hash, "{}", now))
        cursor.execute(
            f"SELECT external_id, id FROM {quote(Document._meta.db_table)} WHERE project_id = %s",
            [project.pk],
        )
        ids = dict(cursor.fetchall())
        version = GoldVersion.objects.create(project=project, kind="spans", number=1, content_hash="")
        with cursor.copy(
            f"COPY {quote(GoldVersionDocument._meta.db_table)} (gold_version_id, document_id, content_hash) FROM STDIN"
        ) as copy:
            for external_id, _, content_hash in documents:
                copy.write_row((version.pk, ids[external_id], content_hash))
        with cursor.copy(
            f'COPY {quote(GoldSpan._meta.db_table)} (gold_version_id, document_id, start, "end", entity_type, label) FROM STDIN'
        ) as copy:
            for (external_id, _, _), document_spans in zip(documents, spans, strict=True):
                document_id = ids[external_id]
                for start, end, entity_type, label in document_spans:
                    copy.write_row((version.pk, document_id, start, end, entity_type, label))
    return time.perf_counter() - started, len(documents), sum(len(s) for s in spans)


def measure(work: Path, bench_url: str, documents: int) -> int:
    """Write a corpus of `documents` in `work`, import it through a job in a child process, then COPY
    it plainly, and print both times; the exit status."""
    setup_django(bench_url, work / "media")
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    gold_path = work / "gold.jsonl"
    started = time.perf_counter()
    spans = write_corpus(gold_path, documents)
    size = gold_path.stat().st_size
    print(
        f"corpus: {documents} documents, {spans} spans, {size / 1e6:.1f} MB "
        f"(written in {time.perf_counter() - started:.1f} s)"
    )

    job_id = prepare_job(gold_path)
    from django.db import connections

    connections.close_all()
    child = subprocess.run(
        [sys.executable, __file__, "--worker-job", str(job_id)],
        env={**os.environ, "DATABASE_URL": bench_url},
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        print(child.stdout, child.stderr, file=sys.stderr)
        return 1
    outcome = json.loads(child.stdout.strip().splitlines()[-1])
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    from annotations.models import Job

    job = Job.objects.get(pk=job_id)
    if job.state != "succeeded":
        print(f"error: the import job {job.state}: {job.errors[:3]}", file=sys.stderr)
        return 1
    job_seconds = outcome["seconds"]
    print(
        f"job path:   {job_seconds:7.1f} s  ({job.result['documents_created']} documents, "
        f"{job.result['rows_imported']} spans; worker peak memory {peak_mib:.0f} MiB)"
    )

    copy_seconds, copied_documents, copied_spans = plain_copy(gold_path)
    print(f"plain COPY: {copy_seconds:7.1f} s  ({copied_documents} documents, {copied_spans} spans)")
    ratio = job_seconds / copy_seconds
    print(f"ratio job / COPY: {ratio:.2f}x (target <= 3x); peak memory {peak_mib:.0f} MiB (target <= 1024)")
    connections.close_all()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="Keep the benchmark database.")
    parser.add_argument("--worker-job", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker_job is not None:
        setup_django(os.environ["DATABASE_URL"], Path(os.environ["MEDIA_ROOT"]))
        run_worker(args.worker_job)
        return 0

    server_url = os.environ.get("DATABASE_URL", "")
    if not server_url.startswith(("postgres://", "postgresql://")):
        print(
            "error: DATABASE_URL must name a PostgreSQL server (bench/import/run.sh starts one with "
            "scripts/lib/services.sh services_start)",
            file=sys.stderr,
        )
        return 2
    name = f"bench_import_{os.getpid()}"
    admin_execute(server_url, f"CREATE DATABASE {name}")
    bench_url = database_url_for(server_url, name)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-import-") as folder:
            return measure(Path(folder), bench_url, args.documents)
    finally:
        if not args.keep:
            admin_execute(server_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        else:
            print(f"kept database {name}")


if __name__ == "__main__":
    sys.exit(main())
