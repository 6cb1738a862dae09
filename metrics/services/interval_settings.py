"""The confidence-interval settings of a run's scoring: the offline commands' defaults (level 0.95,
2,000 resamples, seed 20260808), overridden by the run's configuration key `intervals`
(`{"level", "resamples", "seed"}`; `resamples: 0` turns intervals off)."""

from __future__ import annotations

from typing import Any

from metrics.pipeline.intervals import IntervalSettings

CONFIG_KEY = "intervals"


def run_interval_settings(config: dict[str, Any] | None) -> IntervalSettings:
    """Raises ValueError naming the bad setting (the scoring job reports it)."""
    given = (config or {}).get(CONFIG_KEY) or {}
    if not isinstance(given, dict):
        raise ValueError(f"{CONFIG_KEY} must be a mapping of level, resamples and seed")
    default = IntervalSettings()
    return IntervalSettings(
        level=given.get("level", default.level),
        resamples=given.get("resamples", default.resamples),
        seed=given.get("seed", default.seed),
    )
