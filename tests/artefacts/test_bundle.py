"""A run folder appears complete or not at all, and never replaces an existing run."""

from __future__ import annotations

import pytest

from metrics.artefacts.bundle import atomic_directory


def test_the_folder_appears_only_when_every_file_is_written(tmp_path):
    target = tmp_path / "runs" / "run-1"

    with atomic_directory(target) as staging:
        (staging / "metrics.csv").write_text("x")
        assert not target.exists()
        assert staging.parent == target.parent and staging.name.startswith(".run-1.")

    assert [path.name for path in target.iterdir()] == ["metrics.csv"]
    assert [path.name for path in target.parent.iterdir()] == ["run-1"]


def test_a_failure_part_way_leaves_nothing_behind(tmp_path):
    target = tmp_path / "run-1"

    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        (staging / "metrics.csv").write_text("x")
        raise RuntimeError("disk full")

    assert list(tmp_path.iterdir()) == []


def test_an_existing_run_is_never_overwritten_but_an_empty_folder_is_filled(tmp_path):
    existing = tmp_path / "run-1"
    existing.mkdir()
    (existing / "metrics.csv").write_text("earlier run")
    empty = tmp_path / "run-2"
    empty.mkdir()

    with pytest.raises(FileExistsError), atomic_directory(existing):
        pass
    with atomic_directory(empty) as staging:
        (staging / "metrics.csv").write_text("new")

    assert (existing / "metrics.csv").read_text() == "earlier run"
    assert (empty / "metrics.csv").read_text() == "new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run-1", "run-2"]
