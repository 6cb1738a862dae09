"""Span scoring benchmark: this engine against nervaluate 1.2.1, end to end, on the same files.

    uv run python bench/spans/run.py [--corpus clinical|independent] [--documents 100000] [--seed 1]
                                     [--repeat 3] [--workdir DIR] [--only TOOL ...]

Writes a seeded synthetic corpus (bench/spans/corpus.py: `clinical`, German-clinical-looking text;
`independent`, random words with non-ASCII letters in twelve types, shaped like the independent
corpus of issue 15) as gold.jsonl and predictions.jsonl (a --workdir that already holds the same
corpus, by its corpus.json, is used as it is), then
runs each tool in its own subprocess, reading the files from disk, and measures each run's wall time
and peak resident memory (the child's own ru_maxrss, from os.wait4). Prints medians over --repeat
runs side by side, and checks that both tools agree on the nervaluate counts.

- ours: metrics.pipeline.span_evaluation.evaluate_span_paths (the real import + scoring path, as
  `evaluate_spans` runs it) in one process; every metric family and the intervals.
- ours-2p: the same with `--processes 2` (chunks scored by a pool of two worker processes).
- ours-no-ci: ours with the intervals off (what nervaluate computes).
- nervaluate: json-load both files, build its list of documents of {label, start, end - 1} sorted by
  (start, end, type), Evaluator(true, pred, tags, loader="dict").evaluate() (overall and per type).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT_ROOT))

from bench.process_tree import descendants  # noqa: E402 (importable once the project root is on the path)

COUNT_KEYS = ("correct", "incorrect", "partial", "missed", "spurious")
# ours: the glue as `evaluate_spans` runs it, one process (bootstrap intervals on); ours-2p: the same
# with `--processes 2`; ours-no-ci: intervals off, what nervaluate computes; nervaluate: the peer.
TOOLS = ("ours", "ours-2p", "ours-no-ci", "nervaluate")
ALL_TOOLS = TOOLS


def _ours(gold_path: Path, predictions_path: Path, *, intervals: bool = True, processes: int = 1) -> dict:
    """Run our path end to end; returns which path ran, its phase times and the micro nervaluate counts.

    With intervals=False the glue is asked for no bootstrap confidence intervals (resamples 0):
    nervaluate computes none, so this is the like-for-like comparison; the default run shows what a
    user of `evaluate_spans` waits for.
    """
    from metrics.pipeline.span_evaluation import evaluate_span_paths

    phases: dict[str, float] = {}
    options: dict = {}
    parameters = inspect.signature(evaluate_span_paths).parameters
    if "phase_seconds" in parameters:
        options["phase_seconds"] = phases
    if not intervals:
        if "intervals" not in parameters:
            raise SystemExit("this evaluate_span_paths has no intervals option")
        from metrics.pipeline.intervals import IntervalSettings

        options["intervals"] = IntervalSettings(resamples=0)
    if processes > 1:
        options["processes"] = processes
    results = evaluate_span_paths(gold_path, predictions_path, **options)
    path = (
        "metrics.pipeline.span_evaluation.evaluate_span_paths"
        + ("" if intervals else " (intervals off)")
        + (f" ({processes} processes)" if processes > 1 else "")
    )
    micro = results["micro"]["nervaluate"]
    return {
        "path": path,
        "phases": {name: round(seconds, 1) for name, seconds in phases.items()},
        "counts": {schema: [micro[schema][k] for k in COUNT_KEYS] for schema in micro},
    }


def _nervaluate(gold_path: Path, predictions_path: Path) -> dict:
    """nervaluate 1.2.1 as its users drive it, on the same files."""
    from nervaluate import Evaluator

    with gold_path.open(encoding="utf-8") as file:
        gold = [json.loads(line) for line in file]
    with predictions_path.open(encoding="utf-8") as file:
        predicted = {doc["document_id"]: doc for doc in map(json.loads, file)}

    def entities(doc: dict | None) -> list[dict]:
        spans = sorted((e["start"], e["end"], e["entity_type"]) for e in (doc["entities"] if doc else []))
        return [{"label": label, "start": start, "end": end - 1} for start, end, label in spans]

    true = [entities(doc) for doc in gold]
    pred = [entities(predicted.get(doc["document_id"])) for doc in gold]
    tags = sorted({e["label"] for doc in true + pred for e in doc})
    results = Evaluator(true, pred, tags, loader="dict").evaluate()
    overall = results["overall"]
    return {
        "path": "nervaluate 1.2.1",
        "counts": {schema: [getattr(overall[schema], k) for k in COUNT_KEYS] for schema in overall},
    }


class _MemorySampler:
    """Samples the resident memory of this process plus its children (from /proc) every 10 ms.

    `ru_maxrss` gives each process's own peak; workers forked by the tool run beside the parent, so
    the memory the machine needs is the sum at one instant, which only sampling sees.
    """

    def __init__(self) -> None:
        self.peak_kb = 0
        self.largest_worker_kb = 0
        # CPU seconds of every process below this one, as last seen: a pool's workers are children
        # of its fork server, so RUSAGE_CHILDREN never sees them; read before they exit (up to 10 ms
        # of each worker's last moments are missed).
        self.worker_cpu_seconds: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @staticmethod
    def _rss_kb(pid: str) -> int:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    @staticmethod
    def _cpu_seconds(pid: str) -> float | None:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                # Fields 14 and 15 (utime, stime), counted after the command name's closing parenthesis.
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _run(self) -> None:
        me = str(os.getpid())
        while not self._stop.wait(0.01):
            pids = descendants(me)[1:]
            for pid in pids:
                seconds = self._cpu_seconds(pid)
                if seconds is not None:
                    self.worker_cpu_seconds[pid] = seconds
            workers = list(map(self._rss_kb, pids))
            self.peak_kb = max(self.peak_kb, self._rss_kb(me) + sum(workers))
            self.largest_worker_kb = max(self.largest_worker_kb, 0, *workers)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def _child(tool: str, gold_path: Path, predictions_path: Path) -> None:
    sampler = _MemorySampler() if os.path.exists("/proc/self/status") else None
    if tool == "nervaluate":
        report = _nervaluate(gold_path, predictions_path)
    else:
        report = _ours(
            gold_path,
            predictions_path,
            intervals=tool != "ours-no-ci",
            processes=2 if tool == "ours-2p" else 1,
        )
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    report["memory"] = {
        "parent_peak_mb": round(own.ru_maxrss / 1024),
        "sampled_total_peak_mb": round(sampler.stop()) if sampler else None,
        # A pool's workers are reaped only at exit (their fork server's children): sampled as well.
        "largest_worker_peak_mb": round(
            max(workers.ru_maxrss, sampler.largest_worker_kb if sampler else 0) / 1024
        ),
    }
    sampled_workers = sum(sampler.worker_cpu_seconds.values()) if sampler else 0.0
    reaped = workers.ru_utime + workers.ru_stime
    report["cpu"] = {
        "parent_s": round(own.ru_utime + own.ru_stime, 1),
        # Reaped children (RUSAGE_CHILDREN) or the sampled pool workers, whichever saw more.
        "workers_s": round(max(reaped, sampled_workers), 1),
        # What the parent's wait4 cannot see: the workers this process never reaped.
        "unreaped_s": max(sampled_workers - reaped, 0.0),
    }
    print(json.dumps(report))


Run = tuple[float, float, float, dict]


def _instant_peak(report: dict) -> float:
    """The most memory the tool's processes held at one instant: the sampled total, or a process's own
    peak when that is larger (a peak shorter than the sampling interval)."""
    memory = report.get("memory", {})
    return max(memory.get("sampled_total_peak_mb") or 0, memory.get("parent_peak_mb", 0))


def _peak_sum(report: dict) -> float:
    """Parent peak + largest worker peak: an upper bound of the memory the tool's processes held at once."""
    memory = report.get("memory", {})
    return memory.get("parent_peak_mb", 0) + memory.get("largest_worker_peak_mb", 0)


def _largest_process(report: dict) -> float:
    """The peak of the tool's largest process (this one or a worker): the issue's memory target."""
    memory = report.get("memory", {})
    return max(memory.get("parent_peak_mb", 0), memory.get("largest_worker_peak_mb", 0))


def _measure(tool: str, gold_path: Path, predictions_path: Path) -> Run:
    """Wall seconds, CPU seconds (with the pool workers'), peak RSS in MB and the child's report, for one
    run of one tool."""
    started = time.perf_counter()
    environment = dict(os.environ)
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", tool, str(gold_path), str(predictions_path)],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        env=environment,
    )
    output = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{tool} failed with exit code {process.returncode}")
    report = json.loads(output.decode().strip().splitlines()[-1])
    cpu_seconds = usage.ru_utime + usage.ru_stime + report.get("cpu", {}).get("unreaped_s", 0.0)
    return seconds, cpu_seconds, usage.ru_maxrss / 1024, report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=("clinical", "independent"), default="clinical")
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool; medians are printed")
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the corpus here, and use it again while corpus.py and the options are unchanged "
        "(default: a temporary directory)",
    )
    parser.add_argument("--only", choices=ALL_TOOLS, action="append", help="run only this tool (repeatable)")
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "GOLD", "PREDICTIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]), Path(args.child[2]))
        return

    with tempfile.TemporaryDirectory(prefix="bench-spans-") as temporary:
        directory = args.workdir or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        gold_path, predictions_path, n_gold, n_predicted, written = _corpus(directory, args)
        size_mb = (gold_path.stat().st_size + predictions_path.stat().st_size) / 2**20
        print(
            f"corpus ({args.corpus}): {args.documents} documents, {n_gold} gold and {n_predicted} predicted spans, "
            f"{size_mb:.0f} MB of JSONL, "
            + (f"written in {time.perf_counter() - started:.1f} s" if written else f"kept from {directory}")
            + f" (seed {args.seed})"
        )
        print(f"load average before the runs: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
        tools = TOOLS if args.only is None else tuple(args.only)
        runs: dict[str, list[Run]] = {tool: [] for tool in tools}
        for repeat in range(args.repeat):
            # Alternate the order so that a noisy neighbour does not always hit the same tool.
            for tool in tools if repeat % 2 == 0 else tools[::-1]:
                run = _measure(tool, gold_path, predictions_path)
                runs[tool].append(run)
                seconds, cpu_seconds, _, report = run
                phases = ", ".join(f"{name} {value} s" for name, value in report.get("phases", {}).items())
                memory = report.get("memory", {})
                print(
                    f"  run {repeat + 1} {tool}: {seconds:.1f} s wall, {cpu_seconds:.1f} s CPU "
                    f"(parent {report['cpu']['parent_s']} s, workers {report['cpu']['workers_s']} s), "
                    f"peak {_instant_peak(report):.0f} MB at one instant (sampled total "
                    f"{memory.get('sampled_total_peak_mb')} MB; parent peak {memory.get('parent_peak_mb')} MB, "
                    f"largest worker peak {memory.get('largest_worker_peak_mb')} MB, sum {_peak_sum(report):.0f} MB) "
                    f"({report['path']}{'; ' + phases if phases else ''})",
                    flush=True,
                )
        print(f"load average after the runs: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
        _print_table(runs)


def _corpus(directory: Path, args: argparse.Namespace) -> tuple[Path, Path, int, int, bool]:
    """The corpus's two files and span counts, and whether they were written now: a workdir that holds
    the same corpus (kind, size, seed, and the same generator source) is read as it is."""
    from bench.spans import corpus

    stamp_path = directory / "corpus.json"
    stamp = {
        "corpus": args.corpus,
        "documents": args.documents,
        "seed": args.seed,
        "generator_sha256": hashlib.sha256(Path(corpus.__file__).read_bytes()).hexdigest(),
    }
    gold_path, predictions_path = directory / "gold.jsonl", directory / "predictions.jsonl"
    try:
        kept = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        kept = {}
    if kept.get("written") == stamp and gold_path.exists() and predictions_path.exists():
        return gold_path, predictions_path, kept["gold_spans"], kept["predicted_spans"], False
    stamp_path.unlink(missing_ok=True)  # no stamp while the files are half written
    write = corpus.write_independent_corpus if args.corpus == "independent" else corpus.write_corpus
    gold_path, predictions_path, n_gold, n_predicted = write(directory, args.documents, args.seed)
    stamp_path.write_text(
        json.dumps({"written": stamp, "gold_spans": n_gold, "predicted_spans": n_predicted})
    )
    return gold_path, predictions_path, n_gold, n_predicted, True


def _print_table(runs: dict[str, list[Run]]) -> None:
    # CPU seconds are printed beside wall seconds: on a shared machine they move less with the load.
    # Memory: `peak MB` is the largest resident total of the tool's processes at one instant (sampled
    # every 10 ms; for one process, its own peak when larger); `sum of peaks` adds the parent's peak
    # and the largest worker's, which happen at different moments: an upper bound, not an amount the
    # processes ever held together.
    medians = {
        tool: (
            statistics.median(run[0] for run in results),
            statistics.median(run[1] for run in results),
            statistics.median(_instant_peak(run[3]) for run in results),
            statistics.median(_peak_sum(run[3]) for run in results),
            statistics.median(_largest_process(run[3]) for run in results),
        )
        for tool, results in runs.items()
    }
    print()
    print(
        f"{'tool':<12} {'wall s':>10} {'CPU s':>10} {'peak MB':>10} {'sum of peaks':>13} {'largest process MB':>19}"
        f"  (medians of {len(next(iter(runs.values())))} runs)"
    )
    for tool, (seconds, cpu_seconds, peak_mb, sum_mb, largest_mb) in medians.items():
        print(
            f"{tool:<12} {seconds:>10.1f} {cpu_seconds:>10.1f} {peak_mb:>10.0f} {sum_mb:>13.0f} {largest_mb:>19.0f}"
        )
    if "nervaluate" not in medians:
        return
    theirs = medians["nervaluate"]
    for tool in medians:
        if tool == "nervaluate":
            continue
        ratios = [theirs[k] / medians[tool][k] for k in range(3)]
        print(
            f"{'ratio':<12} {ratios[0]:>9.1f}x {ratios[1]:>9.1f}x {ratios[2]:>9.1f}x  (nervaluate / {tool})"
        )
    for tool in medians:
        if tool != "nervaluate":
            agree = runs[tool][0][3]["counts"] == runs["nervaluate"][0][3]["counts"]
            print(
                f"{tool}: nervaluate counts (COR, INC, PAR, MIS, SPU per schema) agree: {'yes' if agree else 'NO'}"
            )
            print(f"{tool} ran: {runs[tool][0][3]['path']}")


if __name__ == "__main__":
    main()
