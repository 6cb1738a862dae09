"""Writing a run's artefact folder all at once, or not at all.

Files are written into a hidden temporary folder beside the target (same file system, so the final
rename is atomic) and the folder is renamed into place only when every file is complete. A failure
part-way removes the temporary folder: a reader never sees a half-written run.

`write_files` writes the files of a folder, the two large JSON records in a forked process while this
one writes the comparison CSV (where forking is safe and a core is idle).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from metrics.engine.attributes.parallel import can_fork_workers, has_idle_core
from metrics.engine.forking import ForkedWork

METRICS_CSV = "metrics.csv"
METRICS_JSON = "metrics.json"
COMPARISON_CSV = "goldstandard_llm_comparison.csv"
LLM_ANNOTATIONS_JSON = "llm_annotations.json"
EXTRACTION_METADATA_JSON = "extraction_metadata.json"
CONFIG_YAML = "config.yaml"
PROMPTS_USED_CSV = "prompts_used.csv"
EVALUATION_LOG = "evaluation.log"

ARTEFACT_NAMES = (
    METRICS_CSV,
    METRICS_JSON,
    COMPARISON_CSV,
    LLM_ANNOTATIONS_JSON,
    EXTRACTION_METADATA_JSON,
    CONFIG_YAML,
    PROMPTS_USED_CSV,
    EVALUATION_LOG,
)


def check_output_dir(target: Path) -> None:
    """Raise FileExistsError unless `target` is absent or an empty folder (never overwrite a run)."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} already exists and is not an empty folder; choose a new one")


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """Yield a temporary folder to fill; on success it becomes `target`, on failure it disappears."""
    target = Path(target)
    check_output_dir(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        # mkdtemp makes the folder private (0700); a run folder is as readable as any other.
        staging.chmod(0o755)
        yield staging
        # rename(2) replaces an empty folder and fails on a non-empty one, so a run that appeared
        # meanwhile is never overwritten.
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# The artefacts built from the inputs alone (not from the rows), and large: a forked process writes
# them while this one writes the comparison CSV.
FORKED_ARTEFACTS = frozenset({LLM_ANNOTATIONS_JSON, EXTRACTION_METADATA_JSON})

Writer = Callable[[Path], None]
_FORKED_WRITERS: tuple[Path, list[tuple[str, Writer]]] | None = None


def _timed_write(folder: Path, file_name: str, write: Writer) -> float:
    start = time.perf_counter()
    write(folder / file_name)
    return time.perf_counter() - start


def _write_forked(indices: list[int]) -> dict[str, float]:
    """In the forked process: write the given artefacts; their wall time per file name."""
    if _FORKED_WRITERS is None:  # pragma: no cover - only a spawned (not forked) process gets here
        raise RuntimeError("artefact writers must be forked from the writing process")
    folder, writers = _FORKED_WRITERS
    return {writers[index][0]: _timed_write(folder, *writers[index]) for index in indices}


def _write_forked_items(indices: list[int]) -> Iterator[dict[str, float]]:
    yield _write_forked(indices)


def write_files(
    folder: Path,
    writers: Sequence[tuple[str, Writer]],
    *,
    phase_seconds: dict[str, float] | None = None,
    parallel: bool | None = None,
) -> None:
    """Run each `(file name, write)` on `folder / file name`; `phase_seconds["write <name>"]` gets each
    file's wall time. With `parallel` (None: wherever forking is safe and a core is idle, see
    `can_fork_workers` and `has_idle_core` in metrics.engine.attributes.parallel), the
    FORKED_ARTEFACTS are written by a forked process meanwhile; an error there is raised here. The
    files are the same either way.
    """
    global _FORKED_WRITERS
    seconds: dict[str, float] = {}
    forked = [index for index, (file_name, _) in enumerate(writers) if file_name in FORKED_ARTEFACTS]
    if parallel is None:
        parallel = can_fork_workers() and has_idle_core()
    if not parallel or not forked or len(forked) == len(writers):
        for file_name, write in writers:
            seconds[file_name] = _timed_write(folder, file_name, write)
    else:
        _FORKED_WRITERS = (folder, list(writers))
        try:
            child = ForkedWork(_write_forked_items, forked)
            for index, (file_name, write) in enumerate(writers):
                if index not in forked:
                    seconds[file_name] = _timed_write(folder, file_name, write)
            for forked_seconds in child.results():
                seconds.update(forked_seconds)
        finally:
            _FORKED_WRITERS = None
    if phase_seconds is not None:
        for file_name, _ in writers:
            key = f"write {file_name}"
            phase_seconds[key] = phase_seconds.get(key, 0.0) + seconds[file_name]
