"""Which images the Docker backend runs, where each one comes from, and what each site needs to run.
`python -m webrl.sites.docker.images requirements` prints what the embedded-sites image installs
(scripts/install-docker.sh builds its wheelhouse from that)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from importlib import metadata

from webrl.errors import UsageError

EMBEDDED_IMAGE = "webrl/sites:latest"
EMBEDDED_BUILD = "sudo scripts/install-docker.sh"  # builds the engine, the base image and EMBEDDED_IMAGE

# What the embedded sites import besides webrl itself: the image installs webrl with --no-deps plus these, so it
# carries no torch, Playwright or DeepSpeed. Their version ranges come from webrl's own metadata.
SITES_RUNTIME = (
    "pydantic",
    "pyyaml",
    "platformdirs",
    "starlette",
    "uvicorn",
    "jinja2",
    "python-multipart",
    "faker",
    "networkx",
    "markdown-it-py",
)

# One instance of the embedded image (all six sites in one process) and one of its containers' writable layer.
EMBEDDED_MEMORY_GB = 1.0
EMBEDDED_DISK_GB = 0.5

ORIGINALS_URL = "http://metis.lti.cs.cmu.edu/webarena-images"

# The WebArena-Verified images, by tag, named here only (compose.yaml repeats them; a test holds the two equal).
# `latest` is the one tag its sources name: its README's `docker run` lines, docs/environments/docker_images.md,
# docker-compose.yml (`:latest`) and src/webarena_verified/environments/container/config.py. Its publish task
# (dev/environments/docker/tasks.py `publish`) pushes a semver tag with each `latest`, but no source says which
# semver each image has, so none is pinned; `webrl images list` shows the digest each local image came with.
VERIFIED_REPOSITORY = "am1n3e/webarena-verified-"
VERIFIED_TAG = "latest"


def verified_image(site: str) -> str:
    """The WebArena-Verified image of `site` (also wikipedia, which only compose.yaml runs), with its tag."""
    return f"{VERIFIED_REPOSITORY}{site}:{VERIFIED_TAG}"


@dataclass(frozen=True)
class WebArenaImage:
    """A real WebArena site: its registry image (WebArena-Verified), the original tarball image, and its needs."""

    site: str
    verified: str  # on the default registry: `docker pull` it
    original: str | None  # the image name a tarball gives after `docker load`; None: no tarball exists
    port: int  # the port the site listens on inside the container (the host port is mapped to it)
    health_path: str  # answers 200 only once the site really serves (GitLab: the sign-in page, not a 502)
    memory_gb: float  # the container's memory limit
    disk_gb: float  # the verified image's size
    original_disk_gb: float | None
    startup_s: int  # how long a fresh container may take to become healthy
    shm_gb: float = 0
    command: tuple[str, ...] | None = None  # overrides the image's command (the original GitLab image needs it)
    environment: dict[str, str] = field(default_factory=dict)  # for every container of the site
    # Named volumes (name -> mount path) that hold the site's data, made beforehand; the site is then left out of
    # `up`'s default sites, and its one container is shared by no other instance (its databases live there).
    volumes: dict[str, str] = field(default_factory=dict)

    @property
    def tarball(self) -> str | None:
        return f"{self.original}.tar" if self.original else None

    @property
    def tarball_route(self) -> str | None:
        """The way around the registry: download the original tarball and load it (None: there is none)."""
        if not self.original:
            return None
        return (
            f"download {self.tarball} ({self.original_disk_gb:g} GB, {ORIGINALS_URL}/{self.tarball}) and run "
            f"`webrl images load {self.tarball}`"
        )

    def how_to_get(self) -> str:
        """The exact commands that make the image available."""
        pull = f"`docker pull {self.verified}` ({self.disk_gb:g} GB)"
        return f"{pull}, or {self.tarball_route}" if self.tarball_route else pull


GL_OPT = "/opt/gitlab"
WEBARENA: dict[str, WebArenaImage] = {
    image.site: image
    for image in (
        WebArenaImage(
            "shopping",
            verified_image("shopping"),
            "shopping_final_0712",
            80,
            "/",
            memory_gb=6,
            disk_gb=13.3,
            original_disk_gb=117,
            startup_s=300,
        ),
        WebArenaImage(
            "shopping_admin",
            verified_image("shopping_admin"),
            "shopping_admin_final_0719",
            80,
            "/admin",
            memory_gb=4,
            disk_gb=2.9,
            original_disk_gb=19.9,
            startup_s=300,
        ),
        WebArenaImage(
            "reddit",
            verified_image("reddit"),
            "postmill-populated-exposed-withimg",
            80,
            "/",
            memory_gb=2,
            disk_gb=8.41,
            original_disk_gb=107,
            startup_s=180,
        ),
        # The verified image's entrypoint would reconfigure GitLab (minutes) at every start whose external URL is not
        # its baked-in one, and move nginx to that URL's port: switched off, as the configuration does it once.
        WebArenaImage(
            "gitlab",
            verified_image("gitlab"),
            "gitlab-populated-final-port8023",
            8023,
            "/users/sign_in",
            memory_gb=8,
            disk_gb=31.6,
            original_disk_gb=155,
            startup_s=900,
            shm_gb=2,
            command=(f"{GL_OPT}/embedded/bin/runsvdir-start",),
            environment={"WA_ENV_CTRL_SKIP_RECONFIGURE": "true"},
        ),
        # One container with Rails, PostgreSQL, tiles, geocoding and routing (Apache on 8080 fronts them); its ~60 GB
        # of data live in the nine volumes that WebArena-Verified's setup makes, under the names it gives them
        # (src/webarena_verified/environments/container/config.py).
        WebArenaImage(
            "map",
            verified_image("map"),
            None,
            8080,
            "/",
            memory_gb=6,
            disk_gb=3.3,
            original_disk_gb=None,
            startup_s=600,
            volumes={
                f"webarena_verified_map_{name}": path
                for name, path in (
                    ("tile_db", "/data/database"),
                    ("routing_car", "/data/routing/car"),
                    ("routing_bike", "/data/routing/bike"),
                    ("routing_foot", "/data/routing/foot"),
                    ("nominatim_db", "/data/nominatim/postgres"),
                    ("nominatim_flatnode", "/data/nominatim/flatnode"),
                    ("website_db", "/var/lib/postgresql/14/main"),
                    ("tiles", "/data/tiles"),
                    ("style", "/data/style"),
                )
            },
        ),
    )
}
MAP_DATA_SETUP = (
    "WebArena-Verified's setup makes them: `inv envs.docker.data-download --site map` and `inv "
    "envs.docker.setup --site map --data-dir DIR` (~60 GB; its docs/environments/map.md)"
)


def webarena_image(site: str) -> WebArenaImage:
    if site not in WEBARENA:
        raise UsageError(f"--sites: there is no WebArena image for '{site}' (available: {', '.join(WEBARENA)})")
    return WEBARENA[site]


def sites_requirements() -> list[str]:
    """SITES_RUNTIME with the version ranges of the installed webrl (one requirement per line)."""
    ranges = {}
    for requirement in metadata.requires("webrl") or []:
        if ";" in requirement:  # an extra's dependency
            continue
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
        ranges[name.lower()] = requirement
    missing = [name for name in SITES_RUNTIME if name not in ranges]
    if missing:
        raise UsageError(f"webrl's metadata lists no {', '.join(missing)}: reinstall webrl (pip install -e .)")
    return [ranges[name] for name in SITES_RUNTIME]


def main(argv: list[str]) -> None:
    if argv != ["requirements"]:
        raise SystemExit("usage: python -m webrl.sites.docker.images requirements")
    print("\n".join(sites_requirements()))


if __name__ == "__main__":
    main(sys.argv[1:])
