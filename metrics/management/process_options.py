"""The --processes option the offline commands share: how many local processes score the chunks."""

from __future__ import annotations

import argparse


def add_processes_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--processes",
        type=_positive,
        default=1,
        metavar="N",
        help="score the documents' chunks in N local processes (default 1: in this one); "
        "the results are the same whatever N",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, found {value}")
    return value
