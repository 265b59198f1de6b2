"""The sites' Docker image installs webrl without its dependencies plus SITES_RUNTIME (no torch, Playwright or
DeepSpeed). This checks that list against what the embedded server and every site's app really import: a site
that starts importing a new package must add it there, or its container fails to start."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from webrl.sites.docker.images import SITES_RUNTIME

# Modules a listed package imports only when they are installed (uvicorn's reloader, anyio's async-library
# detection), which other extras install here. The probe blocks them, so it also shows the sites start without them.
OPTIONAL = ("watchfiles", "sniffio")
# The embedded server with every site's app built: the third-party distributions that brings in.
PROBE = """
import sys
for name in sys.argv[1:]:  # OPTIONAL: its import raises ImportError, as where it is not installed
    sys.modules[name] = None
before = set(sys.modules)  # what the interpreter loaded at start (.pth hooks), not the sites
import json
from importlib import metadata
import webrl.sites.embedded.server
from webrl.sites.embedded.registry import SITE_NAMES, site_spec
for name in SITE_NAMES:
    site_spec(name)
owners = metadata.packages_distributions()
loaded = {dist for module in set(sys.modules) - before for dist in owners.get(module.partition(".")[0], [])}
print(json.dumps(sorted(loaded)))
"""


def closure(names) -> set[str]:
    """The distributions `names` install here, with what they require on this Python (no extras)."""
    seen, todo = set(), [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


def test_the_image_installs_what_the_sites_import():
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *OPTIONAL], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = {canonicalize_name(dist) for dist in json.loads(result.stdout.splitlines()[-1])}
    missing = loaded - closure(SITES_RUNTIME) - {"webrl"}
    assert not missing, f"the sites import {sorted(missing)}, which the image does not install (SITES_RUNTIME)"
