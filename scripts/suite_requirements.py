"""The suite image's requirements (scripts/install-docker.sh --suite): every package of this .venv at its installed
version, less the documentation tools (webrl's `docs` extra) and what only they need. The image runs what the tests
ran here; the docs tools are not part of that, and some of them need a newer Python than the image's Debian one."""

from __future__ import annotations

import re
from importlib.metadata import Distribution, distribution, distributions

from packaging.requirements import Requirement


def key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, Distribution]:
    return {key(d.metadata["Name"]): d for d in distributions()}


def closure(roots: list[Requirement], dists: dict[str, Distribution]) -> set[str]:
    """The installed packages `roots` need, transitively (extras and markers as pip evaluates them)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(key(r.name), frozenset(r.extras)) for r in roots]
    while todo:
        name, extras = todo.pop()
        if name not in dists or (name, extras) in seen:
            continue
        seen.add((name, extras))
        environments = [{"extra": e} for e in extras] or [{"extra": ""}]
        for child in map(Requirement, dists[name].requires or []):
            if child.marker is None or any(child.marker.evaluate(env) for env in environments):
                todo.append((key(child.name), frozenset(child.extras)))
    return {name for name, _ in seen}


def main() -> None:
    dists = installed()
    webrl = distribution("webrl")
    docs = [Requirement(r) for r in webrl.requires or [] if 'extra == "docs"' in r]
    docs_tools = closure([Requirement(str(r).split(";")[0]) for r in docs], dists)
    kept = set(dists) - docs_tools - {"pip", "webrl"}
    extras = ",".join(e for e in webrl.metadata.get_all("Provides-Extra") or [] if e != "docs")
    kept |= closure([Requirement(f"webrl[{extras}]"), *(Requirement(name) for name in kept)], dists) - {"webrl"}
    for name in sorted(kept):
        print(f"{dists[name].metadata['Name']}=={dists[name].version}")


if __name__ == "__main__":
    main()
