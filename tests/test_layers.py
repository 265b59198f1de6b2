"""The layer contract: webrl's parts import only the parts below them. Every import of the library (module level,
inside functions, under TYPE_CHECKING, relative, and importlib.import_module with a constant name) is read
from the source, with cli/, sites/ and evaluators/ at their import names (webrl.cli, webrl.sites,
webrl.evaluators), and each module is placed in a part by the longest name in LAYERS that it starts with."""

from __future__ import annotations

import ast
from pathlib import Path

from webrl.sitelist import SITE_LIST

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"webrl": "webrl", "cli": "webrl.cli", "sites": "webrl.sites", "evaluators": "webrl.evaluators"}

# Bottom to top: a part may import the parts on earlier lines only; parts on one line do not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("webrl.errors",),
    (
        "webrl.netutil",
        "webrl.files",
        "webrl.timing",
        "webrl.provenance",
        "webrl.layered_settings",
        "webrl.sitelist",
        "webrl.cluster",
    ),
    ("webrl.config", "webrl.browser"),
    ("webrl.doctor",),
    ("webrl.tasks",),
    ("webrl.evaluators",),
    ("webrl.sites", "webrl.sites.base"),  # the package itself holds only its docstring
    ("webrl.env",),
    ("webrl.policy",),
    ("webrl.sites.platform",),  # what every embedded site is built on
    ("webrl.sites.store",),
    tuple(f"webrl.sites.{site.name}" for site in SITE_LIST if site.port is not None),  # one package per site
    ("webrl.sites.embedded",),  # the embedded backend, its server, the site registry and the embedded suite
    ("webrl.sites.docker",),
    ("webrl.sites.backends", "webrl.sites.task_sets"),
    ("webrl.runs",),
    ("webrl.rl",),
    ("webrl.curriculum", "webrl.orm"),
    ("webrl.families",),  # the task families, found by webrl.tasks.family through their entry points
    ("webrl.train",),
    ("webrl.cli",),
    ("webrl", "webrl.__main__"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts[0] = FOLDERS[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_statements(path: Path, module: str) -> list[tuple[str, ...]]:
    """What each import of `path` names: (name,) for `import name` or import_module("name"), and (base,
    base.member, ...) for `from base import member, ...`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    statements: list[tuple[str, ...]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            statements += [(alias.name,) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            statements.append((base, *(f"{base}.{alias.name}" for alias in node.names)))
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            statements.append((node.args[0].value,))
    return statements


def imported_names(path: Path, module: str) -> set[str]:
    """Every webrl module (or name in one) that `path` imports."""
    names = {name for statement in import_statements(path, module) for name in statement}
    return {name for name in names if name == "webrl" or name.startswith("webrl.")}


def part_of(name: str) -> str | None:
    """The LAYERS name `name` falls under (the longest that it is or starts with)."""
    parts = [p for layer in LAYERS for p in layer if name == p or name.startswith(p + ".")]
    return max(parts, key=len) if parts else None


def level(part: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if part in layer)


def library_modules() -> dict[str, Path]:
    return {module_name(p): p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))}


def upward_imports(modules: dict[str, Path]) -> list[str]:
    found = []
    for module, path in modules.items():
        here = part_of(module)
        for name in sorted(imported_names(path, module)):
            there = part_of(name)
            if there is None or there == here:
                continue
            if level(there) >= level(here):
                found.append(f"{path.relative_to(ROOT)}: {module} ({here}) imports {name} ({there})")
    return found


def test_every_module_has_a_place():
    assert [m for m in library_modules() if part_of(m) is None] == []


def test_no_part_imports_one_above_it_or_beside_it():
    assert upward_imports(library_modules()) == []


def test_the_scan_sees_an_upward_import(tmp_path, monkeypatch):
    """The contract can fail: a tasks module that imports the policy layer is caught, lazily imported or not."""
    bad = ROOT / "webrl" / "tasks" / "load.py"
    source = tmp_path / "load.py"
    source.write_text("def f():\n    from ..policy import base\n")
    monkeypatch.setattr(
        Path, "read_text", lambda self, *a, **k: source.open().read() if self == bad else open(self).read()
    )
    assert upward_imports({"webrl.tasks.load": bad}) == [
        "webrl/tasks/load.py: webrl.tasks.load (webrl.tasks) imports webrl.policy (webrl.policy)",
        "webrl/tasks/load.py: webrl.tasks.load (webrl.tasks) imports webrl.policy.base (webrl.policy)",
    ]


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of `modules` it imports: `from package import submodule` imports the submodule, a
    name defined in a module imports that module."""

    def module_of(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for module, path in modules.items():
        targets = set()
        for base, *members in import_statements(path, module):
            targets |= {member if member in modules else module_of(base) for member in members or [base]}
        graph[module] = targets - {"", module}
    return graph


def import_cycles(modules: dict[str, Path]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a circle (Tarjan's strongly connected
    components of more than one module), each sorted."""
    graph = import_graph(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(groups)


def test_no_modules_import_each_other():
    assert import_cycles(library_modules()) == []


def test_the_scan_sees_a_circle_of_lazy_imports(tmp_path):
    """The check can fail: two modules that import each other, one of them inside a function, are caught."""
    (tmp_path / "a.py").write_text("from webrl.runs.b import run\n")
    (tmp_path / "b.py").write_text("def run():\n    from . import a\n")
    (tmp_path / "c.py").write_text("from webrl.runs import a\n")
    modules = {f"webrl.runs.{name}": tmp_path / f"{name}.py" for name in "abc"}
    assert import_cycles(modules) == [["webrl.runs.a", "webrl.runs.b"]]
