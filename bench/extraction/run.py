"""Benchmark: a full offline extraction evaluation against the reference tool's figures.

    uv run python bench/extraction/run.py [--documents 20000] [--seed 7] [--repeat 3]

Generates a seeded workload (documents x 10 attributes: 3 BOOL, 3 STRING, 2 INTEGER, 2 FLOAT; ~2 KB
contexts; EPPI gold with citations; predictions with realistic errors), then runs the evaluation
`--repeat` times, each in a fresh subprocess doing what `manage.py evaluate_extraction` does (read,
score, compute the confidence intervals, write every artefact, print the table). It reports, as medians over the runs, the wall time of
the subprocess (interpreter start and imports included), the peak RSS of the evaluation processes and the time of each phase, beside the reference tool's figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT_ROOT))

# The reference tool on the same workload (20,000 documents x 10 attributes); other sizes print no ratio.
REFERENCE_DOCUMENTS = 20_000
REFERENCE = {
    "wall_seconds": 36.0,
    "peak_rss_mb": 1200.0,
    "score": 7.0,
    "write goldstandard_llm_comparison.csv": 11.0,
}
TARGET = {"wall_seconds": 6.0, "peak_rss_mb": 400.0}


def child(workdir: Path, output_dir: Path) -> None:
    """One evaluation, step by step as the command runs it; prints phase timings and the peak RSS
    reached after each step as JSON on its last line."""
    phases: dict[str, float] = {}
    cpu_phases: dict[str, float] = {}
    peak_mb: dict[str, float] = {}
    worker_peak_mb: dict[str, float] = {}

    def cpu_seconds() -> float:
        # This process and the worker processes it forked (scoring, writing) and waited for.
        workers = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + workers.ru_utime + workers.ru_stime

    cpu = cpu_seconds()
    gc.disable()  # as the evaluate_extraction command does

    def mark(step: str) -> None:
        nonlocal cpu
        peak_mb[step] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # The largest worker's peak RSS; much of it is pages shared with this process (fork).
        worker_peak_mb[step] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        now = cpu_seconds()
        cpu_phases[step], cpu = now - cpu, now

    start = time.perf_counter()
    from metrics.artefacts import format_metrics_table
    from metrics.extraction_evaluation import (
        add_run_intervals,
        evaluate_extraction_inputs,
        load_config,
        read_extraction_inputs,
        resolve_settings,
        write_run_artefacts,
    )
    from metrics.intervals import IntervalSettings

    phases["imports"] = time.perf_counter() - start
    mark("imports")
    start = time.perf_counter()
    config = load_config(workdir / "config.yaml")
    settings = resolve_settings(config)
    inputs = read_extraction_inputs(
        gold=workdir / "gold_eppi.json", prompts=workdir / "prompts.csv", predictions=workdir / "llm.jsonl"
    )
    phases["load"] = time.perf_counter() - start
    mark("load")
    start = time.perf_counter()
    run = evaluate_extraction_inputs(inputs, run_id="bench", settings=settings, config=config)
    phases["score"] = time.perf_counter() - start
    mark("score")
    # Confidence intervals with the command's defaults (2,000 resamples): their cost is its own phase.
    start = time.perf_counter()
    add_run_intervals(run, IntervalSettings())
    phases["intervals"] = time.perf_counter() - start
    mark("intervals")
    start = time.perf_counter()
    write_run_artefacts(run, output_dir, phase_seconds=phases)
    phases["write (all artefacts)"] = time.perf_counter() - start
    mark("write")
    start = time.perf_counter()
    table = format_metrics_table(run.evaluation)
    phases["format table"] = time.perf_counter() - start
    print(table, file=sys.stderr)
    mark("format table")
    result = {
        "phases": phases,
        "cpu_phases": cpu_phases,
        "peak_mb_after": peak_mb,
        "worker_peak_mb_after": worker_peak_mb,
        "rows": len(run.evaluation.rows),
    }
    print(json.dumps(result))


def measure_once(workdir: Path) -> dict:
    output_dir = workdir / "out"
    shutil.rmtree(output_dir, ignore_errors=True)
    command = [sys.executable, __file__, "--child", str(workdir), str(output_dir)]
    cpu_before = _children_cpu_seconds()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate()
    cpu = _children_cpu_seconds() - cpu_before
    wall = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"evaluation failed ({process.returncode}):\n{stderr}")
    result = json.loads(stdout.strip().splitlines()[-1])
    return {"wall_seconds": wall, "cpu_seconds": cpu, **result}


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workdir", type=Path, help="where to put the workload (default: a temporary folder)"
    )
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate-into", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.generate_into:
        from bench.extraction.workload import generate

        generate(args.generate_into, documents=args.documents, seed=args.seed)
        return

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-extraction-"))
    started = time.perf_counter()
    # Generated in its own process: Linux carries a process's peak RSS over into the programs it
    # starts, so a parent holding the workload would inflate every evaluation's measured peak.
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--generate-into",
            str(workdir),
            "--documents",
            str(args.documents),
            "--seed",
            str(args.seed),
        ],
        check=True,
    )
    sizes = {path.name: path.stat().st_size / 1e6 for path in sorted(workdir.iterdir()) if path.is_file()}
    print(f"workload: {args.documents} documents x 10 attributes, seed {args.seed}, in {workdir}")
    print("  " + ", ".join(f"{name} {size:.1f} MB" for name, size in sizes.items()))
    print(f"  generated in {time.perf_counter() - started:.1f} s")

    runs = [measure_once(workdir) for _ in range(args.repeat)]
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    report(runs, args)


def report(runs: list[dict], args: argparse.Namespace) -> None:
    def median(key: str, source: str | None = None) -> float:
        return statistics.median(run[source][key] if source else run[key] for run in runs)

    comparable = args.documents == REFERENCE_DOCUMENTS

    def line(name: str, ours: float, reference: float | None = None, digits: int = 2) -> None:
        reference = reference if comparable else None
        shown = f"{reference:10.1f}" if reference else " " * 10
        ratio = f"{ours / reference:7.3f}" if reference else ""
        print(f"{name:44} {ours:9.{digits}f} {shown} {ratio}")

    print(f"\n{runs[0]['rows']} comparison rows; medians of {len(runs)} run(s), each in a fresh process\n")
    print(f"{'measure':44} {'ours':>9} {'reference':>10} {'ratio':>7}")
    wall = median("wall_seconds")
    peak = max(run["peak_mb_after"]["write"] for run in runs)
    line("total wall time (s)", wall, REFERENCE["wall_seconds"])
    line("total CPU time, user + sys, with workers (s)", median("cpu_seconds"), REFERENCE["wall_seconds"])
    line("peak RSS (MB, the largest run)", peak, REFERENCE["peak_rss_mb"], digits=0)
    after = {step: max(run["peak_mb_after"][step] for run in runs) for step in runs[0]["peak_mb_after"]}
    print("  peak RSS by the end of: " + ", ".join(f"{step} {mb:.0f} MB" for step, mb in after.items()))
    workers = max(run.get("worker_peak_mb_after", {}).get("write", 0.0) for run in runs)
    if workers:
        print(
            f"  largest forked worker's peak RSS (pages shared with the main process included): {workers:.0f} MB"
        )
    print("wall time per phase (s):")
    for phase in runs[0]["phases"]:
        line(f"  {phase}", median(phase, "phases"), REFERENCE.get(phase), digits=3)
    print("CPU time per phase, forked workers included (s):")
    for phase in runs[0]["cpu_phases"]:
        line(f"  {phase}", median(phase, "cpu_phases"), REFERENCE.get(phase), digits=3)
    verdict = "meets" if wall <= TARGET["wall_seconds"] and peak <= TARGET["peak_rss_mb"] else "MISSES"
    print(
        f"\ntarget: <= {TARGET['wall_seconds']:.0f} s and <= {TARGET['peak_rss_mb']:.0f} MB (wall, peak): {verdict}"
    )
    print(json.dumps({"documents": args.documents, "seed": args.seed, "runs": runs}), file=sys.stderr)


if __name__ == "__main__":
    main()
