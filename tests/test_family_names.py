"""Generic code names no task family: the environment, the runs, the recipe, the curriculum, the task model and
the evaluators' router reach a family only through the TaskFamily interface (webrl.tasks.family), which finds the
families by entry point at run time. Read from the source: no import of webrl.families, and no identifier or
string (docstrings aside: prose may give a family as an example) that names one."""

from __future__ import annotations

import ast
import re

from test_layers import import_statements, library_modules

GENERIC = ("webrl.env", "webrl.runs", "webrl.rl", "webrl.train", "webrl.curriculum", "webrl.tasks")
GENERIC_MODULES = ("webrl.evaluators.router", "webrl.evaluators.result")
FAMILY_WORDS = re.compile(r"miniwob|verified", re.IGNORECASE)

# Allowed, narrowly: the options' help and their errors (the settings modules' strings) give task-set names as examples
HELP = ("webrl.runs.eval_settings", "webrl.train.settings")


def allowed(module: str, text: str) -> bool:
    if text.startswith("webrl.families"):
        return False  # an import: never
    return module in HELP and not text.isidentifier()


def generic_modules() -> dict:
    return {
        module: path
        for module, path in library_modules().items()
        if module in GENERIC_MODULES or any(module == p or module.startswith(p + ".") for p in GENERIC)
    }


def docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def family_names(module: str, path) -> list[tuple[str, str]]:
    """(module, what names a family) for every import of webrl.families and every such identifier or string."""
    found = [
        (module, name)
        for statement in import_statements(path, module)
        for name in statement[:1]
        if name == "webrl.families" or name.startswith("webrl.families.")
    ]
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.arg):
            text = node.arg
        elif isinstance(node, ast.keyword):
            text = node.arg or ""
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            text = node.name
        elif isinstance(node, ast.alias):
            text = node.asname or node.name
        else:
            continue
        if FAMILY_WORDS.search(text):
            found.append((module, text))
    return found


def test_no_generic_module_names_a_family():
    found = [hit for module, path in generic_modules().items() for hit in family_names(module, path)]
    assert sorted({(module, text) for module, text in found if not allowed(module, text)}) == []


def test_the_scan_sees_a_family_named(tmp_path):
    source = tmp_path / "bad.py"
    source.write_text(
        '"""MiniWoB++ in prose is fine."""\nfrom webrl.families.miniwob import page\n\n\ndef f(task):\n'
        '    return task.family_data.get("miniwob")\n'
    )
    assert family_names("webrl.runs.bad", source) == [
        ("webrl.runs.bad", "webrl.families.miniwob"),
        ("webrl.runs.bad", "miniwob"),
    ]
