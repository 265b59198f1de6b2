"""The checkout is all a user has: no library, test, bench or script file may reach a path above the repository
root (a `../shared` beside the clone exists on the developers' machines and in CI, never on a user's)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("webrl", "cli", "sites", "evaluators", "tests", "bench", "scripts", "examples", ".ci")
# A literal that names the developers' folder beside the checkout, in any file.
OUTSIDE = re.compile(r"""\.\./shared\b|["']shared["']\s*/\s*["']webarena|/shared/(webarena|reference|DESIGN)""")
# What a user cannot look up: the developers' design file and their tracker's issue numbers (upstream projects'
# public ones, "webarena PR #29", "BrowserGym#285", are links a user can follow).
UNSEEN = re.compile(r"DESIGN\.md|\b[Ii]ssues? #?\d+\b|\(#\d+\)")


def files() -> list[Path]:
    return [
        p
        for folder in FOLDERS
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and p.suffix in {".py", ".sh", ".js", ".yaml", ".toml", ""} and "__pycache__" not in p.parts
    ]


def ancestor_depth(node: ast.AST) -> int | None:
    """How many folders above the file's own folder an expression built from ``__file__`` reaches:
    ``Path(__file__).resolve().parents[2]`` -> 2, ``Path(__file__).parent.parent`` -> 1; None if it is not one."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and mentions_file(node.value):
            return node.slice.value
    climbed = 0
    while isinstance(node, ast.Attribute) and node.attr == "parent":
        climbed, node = climbed + 1, node.value
    return climbed - 1 if climbed and mentions_file(node) else None


def mentions_file(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))


def test_no_file_reaches_above_the_repository_root():
    escapes = []
    for path in files():
        text = path.read_text(errors="replace")
        if path != Path(__file__).resolve():  # this file names the patterns it looks for
            escapes += [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for m in OUTSIDE.finditer(text)]
        if path.suffix != ".py":
            continue
        depth = len(path.relative_to(ROOT).parts) - 1  # folders between the root and the file
        for node in ast.walk(ast.parse(text)):
            climbed = ancestor_depth(node)
            if climbed is not None and climbed > depth:
                escapes.append(
                    f"{path.relative_to(ROOT)}:{node.lineno}: climbs {climbed} folders above its own, "
                    f"which is {depth} below the root"
                )
    assert not escapes, "\n".join(escapes)


def test_the_docs_and_code_cite_nothing_a_user_cannot_see():
    texts = [*files(), ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "configs").glob("*.yaml")]
    cited = [
        f"{path.relative_to(ROOT)}: {m.group(0)!r}"
        for path in texts
        if path != Path(__file__).resolve()
        for m in UNSEEN.finditer(path.read_text(errors="replace"))
    ]
    assert not cited, "\n".join(cited)


def test_the_scan_finds_an_escape():
    """The scan itself can fail: the expressions the tests used before (a file two folders down) are caught."""

    def climbs(source: str) -> int:
        return max(d for n in ast.walk(ast.parse(source)) if (d := ancestor_depth(n)) is not None)

    assert climbs('Path(__file__).resolve().parents[3] / "shared"') == 3
    assert climbs("Path(__file__).parent.parent.parent") == 2
    assert climbs("Path(__file__).parent") == 0
    assert OUTSIDE.search('SHARED = ROOT / "shared" / "webarena"') and OUTSIDE.search("cat ../shared/DESIGN.md")
    assert all(UNSEEN.search(s) for s in ("see DESIGN.md", "(issue 47)", "issues #20", "fixed (#46)"))
    assert not any(UNSEEN.search(s) for s in ("webarena PR #29", "BrowserGym#285", "see #12", "issues/12"))
