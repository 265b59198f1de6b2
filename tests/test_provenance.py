"""A result's provenance names the commit it was made from, and says so when the checkout had uncommitted changes."""

from __future__ import annotations

import os
import subprocess
import sys

from webrl.provenance import portable_command, provenance


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_the_commit_and_its_uncommitted_changes(tmp_path):
    assert provenance(tmp_path)["commit"] == "unknown"  # not a git checkout
    git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    git(tmp_path, "add", "code.py")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = git(tmp_path, "rev-parse", "--short=12", "HEAD")
    (tmp_path / "untracked.txt").write_text("a run's output\n")  # untracked files do not make it dirty
    stamped = provenance(tmp_path)
    assert stamped["commit"] == head and stamped["cores"] >= 1 and stamped["machine"] and stamped["date"][:2] == "20"
    (tmp_path / "code.py").write_text("x = 2\n")
    assert provenance(tmp_path)["commit"] == head + "+dirty"


def test_the_command_names_no_folder_of_the_machine(tmp_path):
    """A stamped command reads the same on any machine: a path in the checkout relative to it, one in the home
    folder from `~` (a shell still expands it), any other as it is."""
    checkout, home = tmp_path / "checkout", tmp_path / "home"
    checkout.mkdir()
    bench = checkout / "bench.py"
    bench.write_text(f"from webrl.provenance import provenance\nprint(provenance({str(checkout)!r})['command'])\n")
    argv = [str(bench), "--json", str(checkout / "r.json"), "--out", f"{home}/runs/a b", f"--log={home}/l", "/tmp/x"]
    stamped = subprocess.run(
        [sys.executable, *argv], env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert stamped == "python bench.py --json r.json --out ~/'runs/a b' '--log=~/l' /tmp/x"


def test_a_command_stamped_on_another_machine_reads_the_same():
    """What scripts/docs_tables.py shows of a file stamped before: its home folder by the usual names."""
    for home in ("/root", "/home/alice", "/Users/alice"):
        assert (
            portable_command(f"python -m webrl train --out {home}/.cache/demo")
            == "python -m webrl train --out ~/.cache/demo"
        )
