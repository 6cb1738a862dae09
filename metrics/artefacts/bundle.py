"""Writing a run's artefact folder all at once, or not at all.

Files are written into a hidden temporary folder beside the target (same file system, so the final
rename is atomic) and the folder is renamed into place only when every file is complete. A failure
part-way removes the temporary folder: a reader never sees a half-written run.

`write_files` writes the files of a folder, one after the other.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

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


Writer = Callable[[Path], None]


def _timed_write(folder: Path, file_name: str, write: Writer) -> float:
    start = time.perf_counter()
    write(folder / file_name)
    return time.perf_counter() - start


def write_files(
    folder: Path,
    writers: Sequence[tuple[str, Writer]],
    *,
    phase_seconds: dict[str, float] | None = None,
) -> None:
    """Run each `(file name, write)` on `folder / file name`; `phase_seconds["write <name>"]` gets each
    file's wall time."""
    seconds = {file_name: _timed_write(folder, file_name, write) for file_name, write in writers}
    if phase_seconds is not None:
        for file_name, _ in writers:
            key = f"write {file_name}"
            phase_seconds[key] = phase_seconds.get(key, 0.0) + seconds[file_name]
