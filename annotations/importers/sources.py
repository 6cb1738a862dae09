"""Walk an input (a file, a directory or a zip archive) and hand out its files one at a time.

Every importer (spans, extraction) reads through here, so the rules live in one place:
- directories and zip archives are walked recursively, in sorted order (results never depend on the
  order a file system or an archive lists its entries);
- macOS junk (`__MACOSX/`, `._*`) and other hidden files and folders are skipped;
- a zip entry whose name could escape the archive root (absolute, `..`, a drive letter) is an error,
  even though nothing is extracted to disk: such an archive is malformed or hostile;
- an encrypted entry, or one compressed by a method zipfile cannot inflate (AES is method 99), is an
  error naming it, found before anything is read;
- decompressed sizes and compression ratios are capped (`ArchiveLimits`), so an upload cannot
  exhaust memory or disk (a "zip bomb"). Caps are checked against the sizes the archive declares
  before anything is inflated, and reading never returns more than the declared size.

Files are opened lazily and as streams, so a large JSONL file is never held in memory whole.
Nothing here imports Django: the server's import jobs use it on uploaded files.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from annotations.importers.errors import ProblemCollector

MiB = 1024 * 1024
# General purpose flag bit 0 of a zip entry: encrypted (zipfile then needs a password to read it).
_ENCRYPTED = 0x1
# What zipfile inflates; any other method (AES is 99) fails only when the entry is read.
READABLE_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Caps on what a zip archive may expand to. The defaults suit a team server; tests lower them."""

    max_member_bytes: int = 1024 * MiB
    max_total_bytes: int = 4096 * MiB
    # Deflate rarely exceeds 20:1 on text; bombs reach 1000:1 and more.
    max_ratio: float = 200.0
    # Small entries (e.g. a short file of spaces) can compress very well and are harmless.
    ratio_checked_above_bytes: int = 1 * MiB
    max_members: int = 500_000


@dataclass(frozen=True, slots=True)
class InMemorySource:
    """An input held in memory, e.g. an uploaded file; `name` (with its extension) says what it is."""

    name: str
    data: bytes


# What every importer reads: a file, folder or zip on disk, or an upload held in memory (its bytes, or
# an InMemorySource whose name says what it is), so the server hands every kind of import one object.
SourceInput = str | os.PathLike[str] | bytes | InMemorySource
UNNAMED_UPLOAD = "<upload>"


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file of an input.

    `display_name` names it in messages ("export.zip!annotation/a.txt/alice.json");
    `relative_path` is its path below the input's root, used to recognise layouts such as INCEpTION's
    project export. A file inside an archive can be opened only while the walk that yielded it has
    not moved on (the archive is closed after its last entry): read it, then ask for the next one.
    """

    display_name: str
    relative_path: PurePosixPath
    _opener: Callable[[], BinaryIO]

    @property
    def suffix(self) -> str:
        return self.relative_path.suffix.lower()

    def open(self) -> BinaryIO:
        """A binary stream of the file's content; close it (use `with`)."""
        return self._opener()

    def read_bytes(self) -> bytes:
        with self.open() as stream:
            return stream.read()


def is_skipped_name(part: str) -> bool:
    """Hidden files and folders, macOS resource forks (`._*`) and `__MACOSX` folders."""
    return part.startswith(".") or part == "__MACOSX"


def iter_source_files(
    source: SourceInput, *, limits: ArchiveLimits, problems: ProblemCollector
) -> Iterator[SourceFile]:
    """Yield every file of `source` (a file, a directory or a zip archive), expanding zips.

    Problems (a missing path, a corrupt or hostile archive) are recorded in `problems` and the walk
    goes on with what can be read, so one pass reports all of them.
    """
    if isinstance(source, bytes):
        source = InMemorySource(UNNAMED_UPLOAD, source)
    if isinstance(source, InMemorySource):
        if _looks_like_zip(source.name, source.data[:4]):
            yield from _iter_zip(source.name, io.BytesIO(source.data), limits=limits, problems=problems)
        else:
            yield SourceFile(source.name, PurePosixPath(source.name), lambda: io.BytesIO(source.data))
        return

    path = Path(source)
    if path.is_dir():
        yield from _iter_directory(path, limits=limits, problems=problems)
    elif path.is_file():
        yield from _iter_path(path, PurePosixPath(path.name), str(path), limits=limits, problems=problems)
    else:
        problems.error("no such file or directory", file=str(path))


def _looks_like_zip(name: str, head: bytes) -> bool:
    return name.lower().endswith(".zip") or head in (ZIP_MAGIC, EMPTY_ZIP_MAGIC)


def _iter_path(
    path: Path, relative: PurePosixPath, display: str, *, limits: ArchiveLimits, problems: ProblemCollector
) -> Iterator[SourceFile]:
    if path.suffix.lower() == ".zip":
        try:
            archive = path.open("rb")
        except OSError as error:
            problems.error(f"cannot read file: {error.strerror}", file=display)
            return
        with archive:
            yield from _iter_zip(display, archive, limits=limits, problems=problems)
    else:
        yield SourceFile(display, relative, lambda: path.open("rb"))


def _iter_directory(root: Path, *, limits: ArchiveLimits, problems: ProblemCollector) -> Iterator[SourceFile]:
    for directory, folder_names, file_names in os.walk(root):
        # Pruning in place stops os.walk from descending into hidden folders; sorting makes it stable.
        folder_names[:] = sorted(name for name in folder_names if not is_skipped_name(name))
        for file_name in sorted(file_names):
            if is_skipped_name(file_name):
                continue
            path = Path(directory, file_name)
            relative = PurePosixPath(path.relative_to(root).as_posix())
            yield from _iter_path(path, relative, str(path), limits=limits, problems=problems)


def _unsafe_member_name(name: str) -> bool:
    """True when extracting `name` could write outside the target folder."""
    normalized = name.replace("\\", "/")
    if normalized.startswith("/") or (len(normalized) > 1 and normalized[1] == ":"):
        return True
    return ".." in normalized.split("/")


def _iter_zip(
    display: str, stream: BinaryIO, *, limits: ArchiveLimits, problems: ProblemCollector
) -> Iterator[SourceFile]:
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError) as error:
        problems.error(f"not a readable zip archive ({error})", file=display)
        return
    with archive:
        members = _checked_members(display, archive, limits=limits, problems=problems)
        for info in members:
            relative = PurePosixPath(info.filename)
            if relative.suffix.lower() == ".zip":
                # Expanding archives inside archives multiplies the bomb risk for no real use case.
                problems.warn("archive inside an archive is not read", file=f"{display}!{info.filename}")
                continue
            yield SourceFile(f"{display}!{info.filename}", relative, _zip_member_opener(archive, info))


def _checked_members(
    display: str, archive: zipfile.ZipFile, *, limits: ArchiveLimits, problems: ProblemCollector
) -> list[zipfile.ZipInfo]:
    """The archive's readable members, sorted by name, after checking every cap on every member."""
    infos = [info for info in archive.infolist() if not info.is_dir()]
    if len(infos) > limits.max_members:
        problems.error(
            f"archive holds {len(infos)} files, more than the limit of {limits.max_members}", file=display
        )
        return []
    accepted = []
    total = 0
    for info in sorted(infos, key=lambda info: info.filename):
        where = f"{display}!{info.filename}"
        if _unsafe_member_name(info.filename):
            problems.error("path traversal: the entry's name points outside the archive root", file=where)
            continue
        if any(is_skipped_name(part) for part in PurePosixPath(info.filename).parts):
            continue
        if info.flag_bits & _ENCRYPTED:
            problems.error("the entry is encrypted; upload it without a password", file=where)
            continue
        if info.compress_type not in READABLE_METHODS:
            problems.error(
                f"compression method {info.compress_type} cannot be read; use deflate (the zip default) "
                "or store",
                file=where,
            )
            continue
        if info.file_size > limits.max_member_bytes:
            problems.error(
                f"decompressed size {info.file_size} bytes exceeds the limit of {limits.max_member_bytes} bytes",
                file=where,
            )
            continue
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > limits.ratio_checked_above_bytes and ratio > limits.max_ratio:
            problems.error(
                f"compression ratio {ratio:.0f}:1 exceeds the limit of {limits.max_ratio:.0f}:1 "
                "(a possible zip bomb)",
                file=where,
            )
            continue
        total += info.file_size
        accepted.append(info)
    if total > limits.max_total_bytes:
        problems.error(
            f"total decompressed size {total} bytes exceeds the limit of {limits.max_total_bytes} bytes",
            file=display,
        )
        return []
    return accepted


def _zip_member_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], BinaryIO]:
    # zipfile never returns more than the declared `file_size` and checks the CRC at the end, so the
    # caps checked on declared sizes also bound what is actually inflated.
    return lambda: archive.open(info)
