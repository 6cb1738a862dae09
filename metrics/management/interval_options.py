"""The confidence interval options the offline commands share: --confidence-level, --resamples, --seed."""

from __future__ import annotations

import argparse
from typing import Any

from metrics.engine.uncertainty.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    IntervalSettings,
    interval_settings_problems,
)
from metrics.management.offline_files import bad_input

_FLAGS = {"level": "--confidence-level", "resamples": "--resamples", "seed": "--seed"}


def add_interval_arguments(
    parser: argparse.ArgumentParser, *, what: str = "confidence intervals", zero_turns_off: bool = True
) -> None:
    parser.add_argument(
        "--confidence-level",
        type=float,
        default=DEFAULT_LEVEL,
        metavar="0..1",
        help=f"level of the {what} (default {DEFAULT_LEVEL})",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples of the documents for the {what} (default {DEFAULT_RESAMPLES}"
        + ("; 0 turns them off)" if zero_turns_off else "; at least 1)"),
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        metavar="N",
        help=f"seed of the resampling (default {DEFAULT_SEED}): the same input and seed give the same "
        "intervals",
    )


def interval_settings_from_options(options: dict[str, Any]) -> IntervalSettings:
    """The settings the flags give; CommandError (exit 2) naming each bad flag."""
    level, resamples, seed = options["confidence_level"], options["resamples"], options["seed"]
    problems = interval_settings_problems(level, resamples, seed)
    if problems:
        raise bad_input("; ".join(f"{_FLAGS[name]}: {message}" for name, message in problems.items()))
    return IntervalSettings(level=level, resamples=resamples, seed=seed)
