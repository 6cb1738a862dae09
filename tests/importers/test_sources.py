"""Walking inputs: files, directories, zips; junk skipped; hostile archives refused."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from annotations.importers.errors import ProblemCollector
from annotations.importers.sources import ArchiveLimits, InMemorySource, SourceInput, iter_source_files
from tests.importers.test_span_fixtures import write, zip_bytes


def walk(
    source: SourceInput, limits: ArchiveLimits | None = None
) -> tuple[dict[str, bytes], ProblemCollector]:
    problems = ProblemCollector()
    contents = {
        str(file.relative_path): file.read_bytes()
        for file in iter_source_files(source, limits=limits or ArchiveLimits(), problems=problems)
    }
    return contents, problems


def test_a_single_file_is_its_own_source(tmp_path: Path) -> None:
    path = write(tmp_path / "gold.jsonl", b"{}\n")
    contents, problems = walk(path)
    assert contents == {"gold.jsonl": b"{}\n"}
    assert problems.errors == []


def test_directories_are_walked_recursively_in_sorted_order_skipping_junk(tmp_path: Path) -> None:
    write(tmp_path / "b" / "deep" / "two.json", b"2")
    write(tmp_path / "a.jsonl", b"1")
    write(tmp_path / "._a.jsonl", b"resource fork")
    write(tmp_path / ".DS_Store", b"finder")
    write(tmp_path / "__MACOSX" / "b" / "._two.json", b"resource fork")
    write(tmp_path / ".git" / "config", b"hidden folder")
    contents, _ = walk(tmp_path)
    assert list(contents) == ["a.jsonl", "b/deep/two.json"]


def test_zip_archives_are_walked_recursively_skipping_macos_twins(tmp_path: Path) -> None:
    archive = write(
        tmp_path / "export.zip",
        zip_bytes(
            {
                "export/b/two.json": b"2",
                "export/a.jsonl": b"1",
                "__MACOSX/export/._a.jsonl": b"resource fork",
                "export/._a.jsonl": b"resource fork",
            }
        ),
    )
    contents, problems = walk(archive)
    assert contents == {"export/a.jsonl": b"1", "export/b/two.json": b"2"}
    assert problems.errors == [] and problems.warnings == []


def test_a_zip_inside_a_directory_is_expanded(tmp_path: Path) -> None:
    write(tmp_path / "batch.zip", zip_bytes({"one.jsonl": b"1"}))
    contents, _ = walk(tmp_path)
    assert contents == {"one.jsonl": b"1"}


def test_files_in_a_zip_are_named_after_the_archive_and_entry(tmp_path: Path) -> None:
    archive = write(tmp_path / "export.zip", zip_bytes({"a/b.json": b"x"}))
    problems = ProblemCollector()
    (file,) = iter_source_files(archive, limits=ArchiveLimits(), problems=problems)
    assert file.display_name == f"{archive}!a/b.json"


def test_an_uploaded_zip_is_recognised_by_its_content() -> None:
    contents, _ = walk(InMemorySource("upload", zip_bytes({"a.jsonl": b"1"})))
    assert contents == {"a.jsonl": b"1"}


def test_an_uploaded_plain_file_is_yielded_as_is() -> None:
    contents, _ = walk(InMemorySource("gold.jsonl", b"{}\n"))
    assert contents == {"gold.jsonl": b"{}\n"}


def test_bare_bytes_are_an_upload_without_a_name() -> None:
    contents, _ = walk(b"{}\n")
    assert contents == {"<upload>": b"{}\n"}


def test_bare_bytes_of_a_zip_are_expanded() -> None:
    contents, _ = walk(zip_bytes({"a.jsonl": b"1"}))
    assert contents == {"a.jsonl": b"1"}


def test_it_rejects_zip_entries_that_traverse_out_of_the_archive(tmp_path: Path) -> None:
    archive = write(
        tmp_path / "evil.zip",
        zip_bytes(
            {"../../etc/passwd": b"x", "/abs.json": b"y", "ok/../../up.json": b"z", "fine.jsonl": b"1"}
        ),
    )
    contents, problems = walk(archive)
    assert contents == {"fine.jsonl": b"1"}
    assert len(problems.errors) == 3
    assert all("path traversal" in problem.message for problem in problems.errors)
    assert {problem.file for problem in problems.errors} == {
        f"{archive}!../../etc/passwd",
        f"{archive}!/abs.json",
        f"{archive}!ok/../../up.json",
    }


def test_it_rejects_an_entry_whose_decompressed_size_exceeds_the_cap(tmp_path: Path) -> None:
    archive = write(tmp_path / "big.zip", zip_bytes({"big.jsonl": b"x" * 5000, "small.jsonl": b"1"}))
    contents, problems = walk(archive, ArchiveLimits(max_member_bytes=4000))
    assert contents == {"small.jsonl": b"1"}
    (problem,) = problems.errors
    assert problem.file == f"{archive}!big.jsonl"
    assert "decompressed size 5000 bytes exceeds the limit of 4000 bytes" in problem.message


def test_it_rejects_an_archive_whose_total_decompressed_size_exceeds_the_cap(tmp_path: Path) -> None:
    archive = write(tmp_path / "many.zip", zip_bytes({f"{n}.jsonl": b"x" * 600 for n in range(3)}))
    contents, problems = walk(archive, ArchiveLimits(max_total_bytes=1000))
    assert contents == {}
    (problem,) = problems.errors
    assert problem.file == str(archive)
    assert "total decompressed size 1800 bytes" in problem.message


def test_it_rejects_an_entry_compressed_beyond_the_ratio_cap(tmp_path: Path) -> None:
    archive = write(tmp_path / "bomb.zip", zip_bytes({"bomb.jsonl": b"\0" * 2_000_000}))
    contents, problems = walk(archive, ArchiveLimits(max_ratio=100))
    assert contents == {}
    (problem,) = problems.errors
    assert "compression ratio" in problem.message and "zip bomb" in problem.message
    assert problem.file == f"{archive}!bomb.jsonl"


def test_small_entries_are_exempt_from_the_ratio_cap(tmp_path: Path) -> None:
    archive = write(tmp_path / "spaces.zip", zip_bytes({"spaces.jsonl": b" " * 50_000}))
    contents, problems = walk(archive, ArchiveLimits(max_ratio=10))
    assert list(contents) == ["spaces.jsonl"]
    assert problems.errors == []


def test_it_reports_a_corrupt_archive(tmp_path: Path) -> None:
    archive = write(tmp_path / "broken.zip", b"PK\x03\x04 this is not really a zip")
    contents, problems = walk(archive)
    assert contents == {}
    assert "not a readable zip archive" in problems.errors[0].message
    assert problems.errors[0].file == str(archive)


def test_it_reports_a_missing_path(tmp_path: Path) -> None:
    _, problems = walk(tmp_path / "absent.jsonl")
    assert problems.errors[0].message == "no such file or directory"


def test_an_archive_inside_an_archive_is_not_read_and_says_so(tmp_path: Path) -> None:
    inner = zip_bytes({"a.jsonl": b"1"})
    archive = write(tmp_path / "outer.zip", zip_bytes({"inner.zip": inner}))
    contents, problems = walk(archive)
    assert contents == {}
    assert "archive inside an archive" in problems.warnings[0].message


def test_the_number_of_entries_is_capped(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive_file:
        for number in range(5):
            archive_file.writestr(f"{number}.jsonl", b"1")
    archive = write(tmp_path / "many.zip", buffer.getvalue())
    _, problems = walk(archive, ArchiveLimits(max_members=4))
    assert "more than the limit of 4" in problems.errors[0].message
