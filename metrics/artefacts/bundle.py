"""A run's artefact folder, written all at once or not at all: into a hidden folder beside the
target (the same file system, so the final rename is atomic); a reader never sees a half-written run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
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


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """Yield a temporary folder to fill; on success it becomes `target`, on failure it disappears.
    FileExistsError unless `target` is absent or an empty folder (a run is never overwritten)."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} already exists and is not an empty folder; choose a new one")
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
