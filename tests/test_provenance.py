"""A result's provenance names the commit it was made from, and says so when the checkout had uncommitted changes."""

from __future__ import annotations

import subprocess

from webrl.provenance import provenance


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
