"""What every offline command does with its files (options, input kinds, outputs), the same way in each."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter

from annotations.importers.errors import InputValidationError
from annotations.services.gold_read import detect_format
from metrics.engine.uncertainty.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    IntervalSettings,
    interval_settings_problems,
)

# Exit status for bad input (the convention of argparse and of most Unix tools for usage errors).
BAD_INPUT = 2
PROBLEMS_SHOWN = 50
OUTPUT_FILE_MODE = 0o644
OUTPUT_DIR_MODE = 0o755

# Kinds of input file, as `input_kind` names them (the sniffer's names, or a JSONL file's by its
# fields), and how a message calls them.
KIND_NAMES = {
    "cas": "an INCEpTION UIMA CAS JSON file (spans)",
    "eppi": "an EPPI Reviewer export (attribute gold)",
    "prompts_csv": "a prompt CSV",
    "span_jsonl": "a span JSONL file",
    "attribute_gold_jsonl": "an attribute gold JSONL file",
    "extraction_predictions_jsonl": "an extraction predictions JSONL file",
}
# The fields of a JSONL file's first record that tell its kind, in the order they are asked.
_JSONL_KINDS = {
    "entities": "span_jsonl",
    "attributes": "attribute_gold_jsonl",
    "annotations": "extraction_predictions_jsonl",
}
# What an input option accepts: the kinds of file, and how a refusal names them.
Accepted = tuple[frozenset[str], str]
SPAN_DATA: Accepted = (frozenset({"cas", "span_jsonl"}), "span data (span JSONL or INCEpTION CAS JSON)")
ATTRIBUTE_GOLD: Accepted = (
    frozenset({"eppi", "attribute_gold_jsonl"}),
    "attribute gold (EPPI Reviewer JSON or attribute JSONL)",
)
PROMPTS: Accepted = (frozenset({"prompts_csv"}), "a prompt CSV")
EXTRACTION_PREDICTIONS: Accepted = (
    frozenset({"extraction_predictions_jsonl"}),
    "extraction predictions (JSONL with annotations)",
)


class OfflineHelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's ordering of options (the command's first), with the description's paragraphs and
    examples kept as written."""


class OfflineCommand(BaseCommand):
    """A command of files in and files out (gate: a server's answer out). One that writes an output
    sets `intervals` (what its interval flags are for, in their help): after its own options it gets
    --overwrite, the interval flags and, with `processes`, --processes."""

    # No database, URL or model checks are needed: skipping them keeps an offline evaluation
    # independent of the server's state (and half a second faster).
    requires_system_checks: list[str] = []
    intervals: str | None = None
    zero_resamples_turns_off = True
    processes = True

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser = super().create_parser(prog_name, subcommand, formatter_class=OfflineHelpFormatter, **kwargs)
        if self.intervals is None:
            return parser
        parser.add_argument(
            "--overwrite",
            action="store_true",
            help="replace an existing output (without it, an existing output is refused with exit status 2)",
        )
        parser.add_argument(
            "--confidence-level",
            type=float,
            default=DEFAULT_LEVEL,
            metavar="0..1",
            help=f"level of the {self.intervals} (default {DEFAULT_LEVEL})",
        )
        parser.add_argument(
            "--resamples",
            type=int,
            default=DEFAULT_RESAMPLES,
            metavar="N",
            help=f"bootstrap resamples of the documents for the {self.intervals} (default {DEFAULT_RESAMPLES}"
            + ("; 0 turns them off)" if self.zero_resamples_turns_off else "; at least 1)"),
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=DEFAULT_SEED,
            metavar="N",
            help=f"seed of the resampling (default {DEFAULT_SEED}): the same input and seed give the same "
            "intervals",
        )
        if self.processes:
            parser.add_argument(
                "--processes",
                type=_positive,
                default=1,
                metavar="N",
                help="score the documents' chunks in N local processes (default 1: in this one); "
                "the results are the same whatever N",
            )
        return parser

    def interval_settings(self, options: dict[str, Any]) -> IntervalSettings:
        """The settings the interval flags give; CommandError (exit 2) naming each bad flag."""
        level, resamples, seed = options["confidence_level"], options["resamples"], options["seed"]
        problems = interval_settings_problems(level, resamples, seed)
        if problems:
            raise bad_input("; ".join(f"{_FLAGS[name]}: {message}" for name, message in problems.items()))
        return IntervalSettings(level=level, resamples=resamples, seed=seed)


_FLAGS = {"level": "--confidence-level", "resamples": "--resamples", "seed": "--seed"}


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, found {value}")
    return value


def input_kind(path: Path) -> str | None:
    """The kind of input file at `path`, or None when it cannot tell (the reader then reports it), as
    for a folder or an archive, whose several files are left to the readers."""
    if not path.is_file() or path.suffix.lower() == ".zip":
        return None
    try:
        found = detect_format(path, "auto")
    except (InputValidationError, OSError):
        return None
    if found != "jsonl":
        return found
    fields = _first_record_fields(path)
    return next((kind for field, kind in _JSONL_KINDS.items() if field in fields), None)


def _first_record_fields(path: Path) -> Collection[str]:
    with path.open("rb") as stream:
        for line in stream:
            if line.strip():
                try:
                    record = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    return ()
                return record.keys() if isinstance(record, dict) else ()
    return ()


def require_input_kinds(options: Mapping[str, Any], accepted: Mapping[str, Accepted]) -> None:
    """CommandError (exit 2, one line) for the first option of `accepted`, in order, whose file
    (`options[name]`, given as `--name`) is of a kind the option does not accept."""
    for name, (kinds, wanted) in accepted.items():
        path = options[name]
        kind = None if path is None else input_kind(Path(path))
        if kind is not None and kind not in kinds:
            raise bad_input(f"--{name} {path}: this is {KIND_NAMES[kind]}, not {wanted}; nothing written")


def bad_input(message: str) -> CommandError:
    return CommandError(message, returncode=BAD_INPUT)


@contextmanager
def unreadable_inputs_refused() -> Iterator[None]:
    """An input that cannot be opened is bad input (exit 2) in the system's words, not a traceback."""
    try:
        yield
    except (FileNotFoundError, IsADirectoryError, PermissionError, FileExistsError) as error:
        raise bad_input(f"{error}; nothing written") from None


def write_json_report(
    output: Path,
    report: Callable[[], dict[str, Any]],
    *,
    overwrite: bool,
    nothing_written: str = "nothing written",
) -> dict[str, Any]:
    """Compute `report()` and write it to `output` (`output_slot`, `write_json_atomically`). Input that
    fails validation is a CommandError (exit 2): how many problems, then the first PROBLEMS_SHOWN of
    them; `nothing_written` says what the command did not write."""
    with output_slot(output, overwrite=overwrite):
        try:
            result = report()
        except InputValidationError as error:
            count = len(error.problems)
            raise bad_input(
                f"invalid input, {count} problem{'s' if count != 1 else ''} found; {nothing_written}:\n"
                f"{error.summary(limit=PROBLEMS_SHOWN)}"
            ) from None
        write_json_atomically(output, result)
    return result


def _is_taken(path: Path) -> bool:
    """An output is taken when it exists, except as an empty folder (nothing would be lost)."""
    return path.exists() and not (path.is_dir() and not any(path.iterdir()))


@contextmanager
def output_slot(path: Path, *, overwrite: bool) -> Iterator[None]:
    """Hold the place of an output the block writes (atomically) at `path`: a taken `path` is refused
    unless `overwrite` (CommandError, exit 2); then an existing folder is moved aside while the block
    runs, removed once the new one is complete, put back if the block fails, so a failed run never
    loses the previous output (a file is replaced by the writer's rename, atomic already)."""
    if not path.parent.is_dir():
        raise bad_input(f"output folder {path.parent} does not exist")
    aside: Path | None = None
    if _is_taken(path):
        if not overwrite:
            raise bad_input(f"{path} already exists; add --overwrite to replace it (nothing written)")
        if path.is_dir():
            aside = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".replaced", dir=path.parent))
            os.replace(path, aside / path.name)
    try:
        yield
    except BaseException:
        if aside is not None:
            if not path.exists():
                os.replace(aside / path.name, path)
            shutil.rmtree(aside, ignore_errors=True)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)
    set_output_modes(path)


def set_output_modes(path: Path) -> None:
    """Files 0644, folders 0755 (readable by the team, like any report), whatever the umask or a
    temporary file's private mode made them."""
    if path.is_dir():
        path.chmod(OUTPUT_DIR_MODE)
        for folder, folders, files in os.walk(path):
            for name in folders:
                Path(folder, name).chmod(OUTPUT_DIR_MODE)
            for name in files:
                Path(folder, name).chmod(OUTPUT_FILE_MODE)
    elif path.exists():
        path.chmod(OUTPUT_FILE_MODE)


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write to a temporary file next to `path`, then rename: readers see the old file or the new one."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); an output is as readable as any other.
        os.fchmod(handle, OUTPUT_FILE_MODE)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            for chunk in _json_chunks(data):
                stream.write(chunk)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _json_chunks(data: dict[str, Any]) -> Iterator[str]:
    """The JSON, indented, with each entry of a list of objects (per_document) on one line: readable
    in an editor, and one `json.dumps` per entry runs the C encoder where `json.dump(indent=...)` runs
    the pure Python one (seconds on 100,000 per-document entries)."""
    yield "{"
    for index, (key, value) in enumerate(data.items()):
        yield ("," if index else "") + f"\n  {json.dumps(key)}: "
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            yield (
                "[\n" + ",\n".join("    " + json.dumps(item, ensure_ascii=False) for item in value) + "\n  ]"
            )
        else:
            yield json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n  ")
    yield "\n}\n"
