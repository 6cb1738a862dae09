"""Scored runs made with the ORM, and the metrics documents the gate tests hold them to."""

from __future__ import annotations

from typing import Any

from annotations.models import GoldVersion, Project
from experiments.models import ExperimentRun
from metrics.models import Scoring


def interval(low: float, high: float) -> dict[str, Any]:
    return {
        "low": low,
        "high": high,
        "level": 0.95,
        "method": "cluster_bootstrap_percentile",
        "resamples": 2000,
        "seed": 20260808,
    }


def metrics_json(accuracy: float, low: float, high: float, *, mae: float | None = 1.5) -> dict[str, Any]:
    """metrics.json of an attribute run: Randomised (101) with an accuracy and its interval, and
    Participants (103) whose mean absolute error is left out when null."""
    participants_metrics = {} if mae is None else {"mean_absolute_error": mae}
    return {
        "extraction_run_id": "run",
        "format_version": 1,
        "intervals_config": {"level": 0.95, "resamples": 2000, "seed": 20260808},
        "attributes": [
            {
                "attribute_id": "101",
                "attribute_label": "Randomised",
                "attribute_type": "BOOL",
                "counts": {"n_gold_instances": 40},
                "metrics": {"accuracy": accuracy},
                "intervals": {"accuracy": interval(low, high)},
            },
            {
                "attribute_id": "103",
                "attribute_label": "Participants",
                "attribute_type": "INTEGER",
                "counts": {"n_gold_instances": 40},
                "metrics": participants_metrics,
                "intervals": {},
            },
        ],
    }


def scored_run(project: Project, report: dict[str, Any], *, name: str = "gpt") -> ExperimentRun:
    """An attribute run of `project` whose latest complete scoring holds `report`."""
    gold_version, _ = GoldVersion.objects.get_or_create(
        project=project, kind="attributes", number=1, defaults={"content_hash": "gold"}
    )
    run = ExperimentRun.objects.create(
        project=project, name=name, kind="attributes", config_hash=name, gold_version=gold_version
    )
    Scoring.objects.create(run=run, number=1, gold_version=gold_version, report=report, is_complete=True)
    return run
