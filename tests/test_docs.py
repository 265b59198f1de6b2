"""The documentation cannot drift: its generated tables are what scripts/docs_tables.py makes of the committed
results and settings models, every `webrl …` command it shows exists with the options it gives, and the quick
start's smoke evaluation runs as written."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from cli_support import webrl

from webrl.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "docs_tables.py"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GLOBAL_OPTIONS = {"--config", "-c", "--state-dir", "--debug", "--help", "-h"}


def check(*pages: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", *map(str, pages)], capture_output=True, text=True, check=False
    )


def test_the_generated_tables_are_what_the_committed_results_make():
    result = check()
    assert result.returncode == 0, result.stderr


def test_a_hand_edited_number_in_a_generated_table_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n<!-- table: cluster -->\n<!-- end -->\n\n<!-- settings: webrl.config:Config -->\n<!-- end -->\n"
    )
    subprocess.run([sys.executable, str(SCRIPT), str(page)], check=True)
    made = page.read_text()
    assert check(page).returncode == 0 and "| local | 1 × 1 |" in made and "`sites.instances`" in made
    number = re.search(r"\| (\d+\.\d) s \|", made)  # a wall time in the cluster table
    page.write_text(made.replace(number.group(0), f"| {float(number.group(1)) + 1:.1f} s |", 1))
    edited = check(page)
    assert edited.returncode == 1 and f"{page}: a generated table differs" in edited.stderr
    page.write_text(made.replace("`7770`", "`7771`"))  # a default typed by hand
    assert check(page).returncode == 1


def test_a_marker_without_its_end_is_refused(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- table: cluster -->\n| a table someone pasted |\n")
    result = check(page)
    assert result.returncode == 2 and "without its `<!-- end -->` line" in result.stderr


def shown_commands(text: str) -> list[str]:
    """Every `webrl …` command a page shows: code spans that are one, and the lines of code blocks, one command per
    `&&` part (after any VAR=value assignments)."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    commands = []
    for line in [line for block in blocks for line in block.splitlines()] + spans:
        line = re.sub(r"(^|\s)#.*$", "", line)  # a shell comment
        for part in re.split(r"&&|;|\|\||(?<!\\)\|(?!\|)", line):
            found = re.match(r"(?:\w+=\S+\s+)*(?:\S*/)?webrl (.*)$", part.strip())
            if found:
                commands.append("webrl " + found.group(1))
    return commands


def words(command: str) -> list[str]:
    """The command's words, as a shell would split them, with the docs' notation ([optional], A\\|B, …) removed."""
    plain = command.replace("\\|", " ").replace("[", " ").replace("]", " ").replace("…", " ")
    try:
        return shlex.split(plain)
    except ValueError:
        return plain.split()


def is_group(node) -> bool:
    return hasattr(node, "list_commands")  # typer's own click: duck-typed, not click.Group


def check_command(command: str, root) -> list[str]:
    """What is wrong with a shown command: a command or an option that does not exist."""
    problems, node, args = [], root, words(command)[1:]
    while args and args[0].startswith("-"):  # global options and their values
        option = args.pop(0).split("=")[0]
        if option not in GLOBAL_OPTIONS:
            problems.append(f"{command}: no global option {option}")
        elif option in ("--config", "-c", "--state-dir") and args:
            args.pop(0)
    while is_group(node) and args and node.get_command(node.context_class(node), args[0]):
        node = node.get_command(node.context_class(node), args.pop(0))
    if is_group(node):
        return [*problems, f"{command}: no such command {' '.join(args[:1])!r}"] if args else problems
    options = {name for p in node.params for name in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    for word in args:
        option = word.split("=")[0].rstrip(").,")
        if option.startswith("--") and option not in options:
            problems.append(f"{command}: `{node.name}` has no option {option}")
    return problems


def test_every_command_the_docs_show_exists_with_its_options():
    root = typer.main.get_command(app)
    shown = {page.name: shown_commands(page.read_text()) for page in PAGES}
    assert len(shown["README.md"]) >= 10 and len(shown["getting-started.md"]) >= 4, shown
    problems = [p for page, commands in shown.items() for c in commands for p in check_command(c, root)]
    assert not problems, "\n".join(problems)


def test_the_command_check_catches_a_wrong_option_and_a_wrong_command():
    root = typer.main.get_command(app)
    assert check_command("webrl eval --tasks embedded:test --limit 20", root) == []
    assert check_command("webrl --state-dir /tmp/x up --instances 2", root) == []
    assert check_command("webrl eval --task embedded:test", root) == [
        "webrl eval --task embedded:test: `eval` has no option --task"
    ]
    assert check_command("webrl evaluate --tasks x", root)
    assert check_command("webrl orm fit", root)


@pytest.mark.slow  # ~40 s: the sites and 20 episodes in Chromium
def test_the_quick_start_runs_as_written(cli_env, tmp_path):
    """The quick start's sites and smoke steps, exactly as README.md's table gives them (the run folder aside)."""
    table = (ROOT / "README.md").read_text()
    steps = dict(re.findall(r"^\| (sites|smoke) \| `\.venv/bin/(webrl [^`]+)` \|", table, re.M))
    assert set(steps) == {"sites", "smoke"}, steps
    out = tmp_path / "smoke"
    smoke = [w if w != "runs/smoke" else str(out) for w in shlex.split(steps["smoke"])[1:]]
    up = webrl(cli_env, *shlex.split(steps["sites"])[1:])
    try:
        assert up.returncode == 0, up.stderr
        result = webrl(cli_env, *smoke, timeout=300)
        assert result.returncode == 0, result.stderr
        assert "Average" in result.stdout and "100.0 ± 0.0" in result.stdout
        summary = json.loads((out / "summary.json").read_text())
        assert summary["success_rate"]["Average"]["mean"] == 100.0 and (out / "report.html").is_file()
    finally:
        webrl(cli_env, "down")


def test_the_learning_verdict_says_whether_the_pre_registered_goal_is_met():
    """The README's first-screen verdict is generated: the goal is an arm's interval above +10 points with every run
    above 0, and one run at or below 0 is enough to miss it."""
    spec = importlib.util.spec_from_file_location("docs_tables", SCRIPT)
    docs_tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs_tables)

    def gain(mean: float, low: float, above: int) -> dict:
        return {"mean": mean, "ci95": [low, mean + 5], "runs": 3, "runs_above_zero": above, "per_run": []}

    result = {
        "runs": {"0": {"0": {}, "1": {}, "2": {}}},
        "summary": {
            "gain webrl": gain(15.0, 11.0, 3),
            "gain filtered-bc": gain(12.0, 10.5, 2),
            "webrl − filtered-bc": {},
        },
        "summary_demonstrated": {"gain webrl": gain(1.0, -2.0, 2)},
        "gates": {"G1": {"holds": True}, "G2": {"holds": False}},
    }
    said = docs_tables.learning(result, "verdict")
    assert "is met by webrl." in said and "over 3 runs (1 split of the environments, 3 seeds each)" in said
    assert "webrl +15.0 points [+11.0, +20.0] (3 of 3 runs above 0)" in said and "G1 holds, G2 fails" in said
    result["summary"]["gain webrl"]["runs_above_zero"] = 2
    assert "is **not met** by any arm." in docs_tables.learning(result, "verdict")
