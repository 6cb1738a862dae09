"""The import rules of the house, read from the source with `ast` (docs/architecture.md, "Rules"):

- no cycle among the modules that run at import time (top-level imports, `if TYPE_CHECKING:` left out),
  nor one hidden in an import inside a function;
- no module imports a private (`_name`) name of another module, nor reads one through a module;
- dependencies point one way: web, webhooks -> metrics -> experiments -> annotations -> evalproject,
  and every app may use `metrics.engine`, a library that imports none of them, nor Django.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import PROJECT_ROOT

APPS = ("annotations", "experiments", "metrics", "evalproject", "web", "webhooks")

# What each app may import, besides itself and `metrics.engine`, which every app may use.
MAY_IMPORT = {
    "evalproject": set(),
    "annotations": {"evalproject"},
    "experiments": {"annotations", "evalproject"},
    "metrics": {"experiments", "annotations", "evalproject"},
    "webhooks": {"annotations", "evalproject"},
    "web": {"metrics", "experiments", "annotations", "evalproject", "webhooks"},
}
ENGINE = "metrics.engine"

# The project's wiring may reach up, and says why; nothing else may.
WIRING = {
    # A request field is refused by the same text rules as an imported file (plain Python, no models).
    ("evalproject.validation", "annotations.importers.checks"),
}

# Findings in modules other engineers rewrite in parallel (issue 15): the integrator fixes them after
# merging and empties these lists. Nothing else may be added here.
KNOWN_CYCLES: list[set[str]] = []
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str
    module: str  # the module imported from
    names: tuple[str, ...]  # the names taken from it (empty for `import module`)
    at_import_time: bool  # a top-level statement, not in a function nor under `if TYPE_CHECKING:`


@cache
def source_modules() -> dict[str, Path]:
    """Dotted name -> source file, for every module and package of the apps, the tests and the benches."""
    modules = {}
    for folder in (*APPS, "tests", "bench"):
        for path in (PROJECT_ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


@cache
def project_modules() -> dict[str, Path]:
    """The modules and packages of the apps."""
    return {name: path for name, path in source_modules().items() if name.split(".")[0] in APPS}


def is_package(module: str) -> bool:
    return source_modules()[module].name == "__init__.py"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(body: list[ast.stmt], at_import_time: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement of a body, and whether it runs when the module is imported."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, at_import_time
        elif isinstance(node, ast.If):
            yield from _statements(node.body, at_import_time and not _is_type_checking(node.test))
            yield from _statements(node.orelse, at_import_time)
        elif isinstance(node, ast.Try):
            for block in (
                node.body,
                node.orelse,
                node.finalbody,
                *(handler.body for handler in node.handlers),
            ):
                yield from _statements(block, at_import_time)
        elif isinstance(node, ast.With):
            yield from _statements(node.body, at_import_time)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # A class body runs at import time; a function body does not.
            yield from _statements(node.body, at_import_time and isinstance(node, ast.ClassDef))
        else:
            for field in ("body", "orelse"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    yield from _statements(block, at_import_time)


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    path = source_modules()[module]
    package = module if is_package(module) else module.rpartition(".")[0]
    found = []
    for node, at_import_time in _statements(ast.parse(path.read_text(encoding="utf-8")).body, True):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, (), at_import_time) for alias in node.names]
        elif node.module != "__future__":
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found.append(Import(module, target, tuple(alias.name for alias in node.names), at_import_time))
    return tuple(found)


def modules_run_by(statement: Import) -> set[str]:
    """The project modules an import statement runs: the module, its packages, submodules it names."""
    known = project_modules()
    run = set()
    parts = statement.module.split(".")
    for depth in range(1, len(parts) + 1):
        run.add(".".join(parts[:depth]))
    run |= {f"{statement.module}.{name}" for name in statement.names}
    return run & known.keys()


def import_graph(*, late_imports: bool = False) -> dict[str, set[str]]:
    """module -> the modules its import runs first (with `late_imports`, also those its functions
    import when called). A module's own packages are left out: they are in sys.modules (initialising)
    before it runs, so importing a sibling through them is no cycle."""
    graph = {}
    for module in project_modules():
        own_packages = {module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)}
        graph[module] = {
            target
            for statement in imports_of(module)
            if statement.at_import_time or late_imports
            for target in modules_run_by(statement)
            if target != module and target not in own_packages
        }
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components with more than one module: each holds at least one import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def private_imports() -> set[tuple[str, str, str]]:
    """(importer, module, name) for every private name a module (of an app, a test or a bench) takes
    from an app's module: `from a import _name`, or `a._name` read through a module bound by an import."""
    known = project_modules()
    found = set()
    for module in source_modules():
        bound_modules = {}
        for statement in imports_of(module):
            if statement.module.split(".")[0] not in APPS:
                continue
            for name in statement.names:
                if f"{statement.module}.{name}" in known:
                    bound_modules[name] = f"{statement.module}.{name}"
                elif name.startswith("_") and not name.startswith("__"):
                    found.add((module, statement.module, name))
        tree = ast.parse(source_modules()[module].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in known:
                        bound_modules[alias.asname] = alias.name
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound_modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.add((module, bound_modules[node.value.id], node.attr))
    return found


def dependencies_against_the_rule() -> set[tuple[str, str]]:
    """(importer, imported) for every import, at any time, that points against the apps' order."""
    found = set()
    for module in project_modules():
        app = module.split(".")[0]
        in_engine = module == ENGINE or module.startswith(ENGINE + ".")
        for statement in imports_of(module):
            target = statement.module
            target_app = target.split(".")[0]
            if in_engine:
                allowed = (
                    target == ENGINE or target.startswith(ENGINE + ".") or target_app not in (*APPS, "django")
                )
            else:
                allowed = (
                    target_app not in APPS
                    or target_app == app
                    or target_app in MAY_IMPORT[app]
                    or target == ENGINE
                    or target.startswith(ENGINE + ".")
                )
            if not allowed and (module, target) not in WIRING:
                found.add((module, target))
    return found


def test_no_module_imports_itself_back_at_import_time():
    assert strongly_connected(import_graph()) == []


def test_no_cycle_is_hidden_in_an_import_inside_a_function():
    """A late import (`from annotations.tasks import ...` inside a function, "to avoid the cycle")
    keeps the cycle, only later: the two modules still need each other."""
    cycles = strongly_connected(import_graph(late_imports=True))
    assert [component for component in cycles if component not in KNOWN_CYCLES] == []
    assert [component for component in KNOWN_CYCLES if component not in cycles] == [], "fixed: take it off"


def test_no_module_takes_a_private_name_from_another():
    found = private_imports()
    assert found - KNOWN_PRIVATE_IMPORTS == set()
    assert KNOWN_PRIVATE_IMPORTS - found == set(), "fixed: take it off the list"


def test_dependencies_point_one_way_and_every_app_may_use_the_engine():
    assert dependencies_against_the_rule() == set()


def test_the_engine_imports_neither_django_nor_an_app():
    engine_imports = {
        (module, statement.module)
        for module in project_modules()
        if module == ENGINE or module.startswith(ENGINE + ".")
        for statement in imports_of(module)
        if statement.module.split(".")[0] in ("django", "rest_framework", "celery", *APPS)
        and not statement.module.startswith(ENGINE)
    }
    assert engine_imports == set()


def test_the_graph_holds_the_imports_that_run_at_import_time():
    graph = import_graph()
    assert "metrics.services.scoring" in graph["metrics.tasks"]
    assert "metrics.services" in graph["metrics.tasks"]  # the package's __init__ runs first
    # A module's own package is initialising when the module runs: importing a sibling is no cycle.
    assert "metrics.services" not in graph["metrics.services.scoring"]


def test_the_cycle_finder_finds_a_cycle_and_leaves_a_chain_alone():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": set()}) == []
