"""Dependencies point one way: webhooks reads annotations (jobs, projects, roles) and nothing above it,
and no app below knows webhooks exist (they learn of nothing; webhooks listens to job_finished)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import PROJECT_ROOT


def imported_apps(folder: Path) -> dict[str, set[str]]:
    """Each module of `folder` and the top-level packages it imports."""
    found = {}
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(PROJECT_ROOT))] = names
    return found


def test_webhooks_imports_no_app_but_annotations():
    above = {"experiments", "metrics"}
    offending = {module: names & above for module, names in imported_apps(PROJECT_ROOT / "webhooks").items()}
    assert {module: names for module, names in offending.items() if names} == {}


def test_no_app_below_imports_webhooks():
    offending = [
        module
        for app in ("annotations", "experiments", "metrics")
        for module, names in imported_apps(PROJECT_ROOT / app).items()
        if "webhooks" in names
    ]
    assert offending == []
