"""The packages of the folders that pyproject.toml maps (its package-dir), found instead of listed, so that a new
package (a site's, with its data-only templates/ and static/ folders) ships without an edit; tests/test_packaging.py
checks that every source and data file reaches the wheel."""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

PACKAGE_DIR = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]


def packages(package: str, folder: str) -> list[str]:
    return [package, *(f"{package}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__"]))]


setup(packages=[name for package, folder in PACKAGE_DIR.items() for name in packages(package, folder)])
