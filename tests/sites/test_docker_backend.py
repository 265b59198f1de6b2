"""The docker backend on a real Docker engine with the embedded-sites image: up, writes through the browser and
over HTTP, reset by recreation and by database restore, isolated instance sets, a container killed under an
episode, eval with per-episode resets, the CLI; and what it refuses (no engine, missing images, taken ports,
too little memory).

The real WebArena images cannot be pulled here (no registry): stand-in images under their names (standins/
standin.py) imitate what the backend depends on: a Magento that redirects to WebArena's original host until
configured, GitLab's nginx port and reconfigure (both images' entrypoints), databases that leave a pid file when
killed, Postmill's files; plus the compose file and the messages that name missing images.

Needs an engine and the images (`sudo scripts/install-docker.sh` installs, starts and builds them); the tests
that need them skip with that reason otherwise."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

import docker
import pytest
import yaml
from docker.errors import ImageNotFound, NotFound
from docker_support import docker_engine_with

from webrl.config import DEFAULT_PORTS, INSTANCE_STRIDE, load_config, on_free_ports
from webrl.errors import UsageError, WebrlError
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings
from webrl.runs.records import EpisodeRecord
from webrl.sites.docker.backend import DockerBackend
from webrl.sites.docker.configure import MAGENTO_SCHEDULED_INDEXERS, configure_commands
from webrl.sites.docker.engine import Need, check_resources, load, pull
from webrl.sites.docker.images import EMBEDDED_BUILD, EMBEDDED_IMAGE, WEBARENA
from webrl.sites.docker.lifecycle import LABEL_OWNER, LABEL_UNIT
from webrl.sites.embedded.registry import WEBARENA_SITES
from webrl.tasks.load import load_tasks
from webrl.tasks.model import Task

pytestmark = pytest.mark.slow  # a real Docker engine: images, containers, recreations

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "sites" / "embedded" / "tasks" / "smoke.json"
STAND_INS = "tests/sites/standins/standin.py"
BASE_IMAGE = "local/debian-py:bookworm"
NO_ENGINE = "unix:///nonexistent/docker.sock"


@pytest.fixture(scope="module")
def engine():
    return docker_engine_with(EMBEDDED_IMAGE, EMBEDDED_BUILD)


def docker_config(state_dir: Path, **sites):
    return on_free_ports(
        load_config(flags={"state_dir": state_dir, **{f"sites.{k}": v for k, v in sites.items()}}, environ={})
    )


@pytest.fixture(scope="module")
def shop(engine, tmp_path_factory):
    """The shop and its admin in two instance sets, from the embedded image (snapshots removed at the end)."""
    backend = DockerBackend(
        docker_config(tmp_path_factory.mktemp("docker"), sites=["shopping", "shopping_admin"], instances=2), "embedded"
    )
    backend.up()
    yield backend
    backend.down()
    backend.purge()


def container(engine, backend: DockerBackend, unit: int | str):
    """The running container of instance `unit` (embedded) or of unit "K-SITE" (real images)."""
    [found] = engine.containers.list(filters={"label": [f"{LABEL_OWNER}={backend.owner}", f"{LABEL_UNIT}=i{unit}"]})
    return found


def add_to_cart_over_http(shop_url: str) -> None:
    request = urllib.request.Request(f"{shop_url}/checkout/cart/add/product/1/", data=b"qty=1", method="POST")
    urllib.request.urlopen(request, timeout=10).close()


def add_to_cart_in_browser(shop_url: str) -> str:
    """A guest adds the saddle to the cart in Chromium; returns the text of the page that follows."""
    from playwright.async_api import async_playwright

    from webrl.browser import launch_chromium

    async def go() -> str:
        async with async_playwright() as playwright:
            browser = await launch_chromium(playwright)
            try:
                page = await browser.new_page()
                await page.goto(f"{shop_url}/spokewise-gel-bike-saddle.html")
                async with page.expect_navigation():
                    await page.click("#product-addtocart-button")
                return await page.inner_text("body")
            finally:
                await browser.close()

    return asyncio.run(go())


# -- the embedded image on a real engine -----------------------------------------------------------------


def test_browser_write_then_reset_gives_back_the_snapshot(shop, engine):
    shop.reset(instance=0)
    url = shop.urls(0)["shopping"]
    _, pristine = shop.checksums("shopping", 0)
    cart = add_to_cart_in_browser(url)
    assert "You added Spokewise Gel Bike Saddle to your shopping cart." in cart
    current, _ = shop.checksums("shopping", 0)
    assert current != pristine and shop.is_dirty("shopping", 0)
    before = container(engine, shop, 0).id

    [result] = [r for r in shop.reset(["shopping"], 0) if r.site == "shopping"]
    assert container(engine, shop, 0).id != before  # recreated from the snapshot image
    assert shop.checksums("shopping", 0) == (pristine, pristine) and not shop.is_dirty("shopping", 0)
    assert 0 < result.ms < 30_000
    [status] = [s for s in shop.status() if s.site == "shopping" and s.instance == 0]
    assert status.last_reset_ms == round(result.ms, 1)  # status reports the recreation, not the boot restore

    add_to_cart_over_http(url)  # the other way back: the in-container database restore (sites.reset = restore)
    assert shop.is_dirty("shopping_admin", 0)  # one store behind both sites
    recreated = container(engine, shop, 0).id
    restoring = DockerBackend(
        shop.config.model_copy(update={"sites": shop.config.sites.model_copy(update={"reset": "restore"})})
    )
    restored = restoring.reset(["shopping"], 0)
    assert {r.site for r in restored} == {"shopping", "shopping_admin"} and all(r.ms < 5_000 for r in restored)
    assert shop.checksums("shopping", 0) == (pristine, pristine)
    assert container(engine, shop, 0).id == recreated  # restored in place
    [status] = [s for s in shop.status() if s.site == "shopping" and s.instance == 0]
    assert status.last_reset_ms is not None and status.last_reset_ms < result.ms  # now the restore is the latest


def test_instance_sets_are_isolated(shop, engine):
    shop.reset()
    urls = [shop.urls(k)["shopping"] for k in (0, 1)]
    ports = [int(u.rsplit(":", 1)[1]) for u in urls]
    assert ports[1] - ports[0] == INSTANCE_STRIDE
    add_to_cart_over_http(urls[1])
    assert shop.is_dirty("shopping", 1) and not shop.is_dirty("shopping", 0)
    first = container(engine, shop, 0).id
    shop.reset(["shopping"], 1)
    assert container(engine, shop, 0).id == first and not shop.is_dirty("shopping", 1)
    for k in (0, 1):
        current, pristine = shop.checksums("shopping", k)
        assert current == pristine
    assert {s.healthy for s in shop.status()} == {True} and len(shop.status()) == 4


def test_a_taken_port_is_named(shop, tmp_path):
    clash = DockerBackend(shop.config.model_copy(update={"state_dir": tmp_path}), "embedded")
    with pytest.raises(
        UsageError,
        match=rf"port {shop.config.sites.port('shopping', 0)} \(shopping instance 0\) "
        rf"is already in use by container webrl-{shop.owner}-i0",
    ):
        clash.up()
    assert not clash.running()


class KillsItsSite:
    """The oracle, except that the site's container is killed as the first action is chosen: the site dies
    under a running episode."""

    name = "oracle-kills-its-site"

    def __init__(self, engine, backend):
        self.engine, self.backend, self.oracle, self.kills = engine, backend, make_policy("oracle"), 0

    def act(self, inputs, sampling):
        if not inputs[0].history:
            container(self.engine, self.backend, 0).kill()
            self.kills += 1
        return self.oracle.act(inputs, sampling)


def run_one_episode(backend, policy, task, out: Path) -> EpisodeRecord:
    from webrl.runs.episodes import Browsers, open_env, run_episode

    async def go() -> EpisodeRecord:
        settings = EvalSettings(tasks="smoke", out=out)
        async with Browsers() as browsers, open_env(browsers, backend, 0, settings) as env:
            return await run_episode(env, browsers, policy, task, 0, settings)

    return asyncio.run(go())


def test_a_container_killed_mid_episode_is_recreated_and_the_episode_is_an_env_error(shop, engine, tmp_path):
    price_task = load_tasks(SMOKE)[0]  # answered at the first step: only the dead site can fail it
    policy = KillsItsSite(engine, shop)
    row = run_one_episode(shop, policy, price_task, tmp_path)
    assert policy.kills == 2  # the episode and its one retry
    assert row.status == "env_error" and row.score is None and "recreated" in row.error, row
    assert container(engine, shop, 0).status == "running"
    again = run_one_episode(shop, make_policy("oracle"), price_task, tmp_path)
    assert again.status == "done" and again.score == 1.0


def test_eval_resets_dirty_sites_between_episodes(shop, run_oracle):
    shop.reset()
    rows = run_oracle(shop, load_tasks(SMOKE))
    assert [rows[t]["score"] for t in sorted(rows)] == [1.0] * len(rows), rows
    # Task 2 writes the wish list, so task 3 (same store) starts with the container of the store and its admin
    # recreated.
    assert rows[3]["reset"]["reset_sites"] == ["shopping", "shopping_admin"] and rows[3]["reset"]["reset_ms"] > 0


# -- the CLI ----------------------------------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path):
    """The environment of a user whose settings put a private state directory on free ports."""
    sites = docker_config(tmp_path / "state").sites
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")} | {"COLUMNS": "200"}
    env |= {"WEBRL_STATE_DIR": str(tmp_path / "state"), "WEBRL_SITES__CONTROL_PORT": str(sites.control_port)}
    return env | {f"WEBRL_SITES__PORTS__{site.upper()}": str(sites.port(site, 0)) for site in DEFAULT_PORTS}


def webrl(env, *args):
    return subprocess.run(
        [sys.executable, "-m", "webrl", *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_cli_up_status_reset_down_purge(engine, cli_env):
    up = webrl(cli_env, "up", "--backend", "docker", "--images", "embedded", "--sites", "homepage")
    assert up.returncode == 0, up.stderr
    assert "sites up" in up.stdout and f"127.0.0.1:{cli_env['WEBRL_SITES__PORTS__HOMEPAGE']}" in up.stdout
    try:
        assert (
            "already up"
            in webrl(cli_env, "up", "--backend", "docker", "--images", "embedded", "--sites", "homepage").stdout
        )
        status = webrl(cli_env, "status")  # no flag: the docker sites of this state dir are found
        assert status.returncode == 0 and "homepage" in status.stdout and "✓" in status.stdout
        reset = webrl(cli_env, "reset")
        assert reset.returncode == 0 and "homepage" in reset.stdout and " ms" in reset.stdout
        clash = webrl(cli_env, "up", "--backend", "docker", "--images", "embedded", "--sites", "reddit")
        assert clash.returncode == 2 and "run `webrl down` first" in clash.stderr
    finally:
        down = webrl(cli_env, "down", "--purge")
    assert down.returncode == 0 and "stopped the sites" in down.stdout and "removed 1 snapshot" in down.stdout
    assert "not running" in webrl(cli_env, "status").stdout


def test_images_load_and_list(engine, cli_env, tmp_path):
    name = f"webrl-test/tiny:{os.getpid()}"
    rootfs = io.BytesIO()
    with tarfile.open(fileobj=rootfs, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    engine.api.import_image_from_data(rootfs.getvalue(), repository=name.split(":")[0], tag=name.split(":")[1])
    saved = tmp_path / "tiny.tar"
    with saved.open("wb") as f:
        for chunk in engine.images.get(name).save(named=True):
            f.write(chunk)
    engine.images.remove(name)
    try:
        loaded = webrl(cli_env, "images", "load", str(saved))
        assert loaded.returncode == 0 and f"loaded {name}" in loaded.stdout, loaded.stderr
        engine.images.get(name)
        engine.images.remove(name)
        # The engine's own progress as it unpacks the layers, which it sends only when asked (quiet=False): a
        # 100 GB tarball is minutes of silence otherwise.
        progress = []
        with saved.open("rb") as data:
            assert load(engine, data, lambda done, total: progress.append((done, total))) == [name]
        assert progress and progress[-1][0] == progress[-1][1] > 0
    finally:
        engine.images.remove(name, force=True)
    listed = webrl(cli_env, "images", "list")
    assert listed.returncode == 0 and EMBEDDED_IMAGE in listed.stdout and "shopping_final_0712" in listed.stdout
    for bad, message in ((tmp_path / "nope.tar", "no such file"), (SMOKE, "not a tar archive")):
        result = webrl(cli_env, "images", "load", str(bad))
        assert result.returncode == 2 and message in result.stderr and str(bad) in result.stderr


def test_a_failed_pull_names_the_image(engine, cli_env):
    """No registry is reachable here (and nobody publishes this name): either way one error naming the image.
    A successful pull's progress needs a registry and is not tested."""
    name = f"webrl-test/never-published:{os.getpid()}"
    with pytest.raises(WebrlError, match=f"cannot pull {name}: "):
        pull(engine, name)
    result = webrl(cli_env, "images", "pull", "wikipedia")
    assert result.returncode == 2 and "there is no WebArena image for 'wikipedia'" in result.stderr


def test_missing_webarena_images_name_the_commands(engine, cli_env):
    # The two smallest sites: the disk and memory check comes first and must pass here (about 13 GB of disk).
    result = webrl(cli_env, "up", "--backend", "docker", "--sites", "shopping_admin,reddit")
    assert result.returncode == 2
    assert "`docker pull am1n3e/webarena-verified-shopping_admin:latest`" in result.stderr  # the pinned tag
    assert "`webrl images load postmill-populated-exposed-withimg.tar`" in result.stderr
    assert "metis.lti.cs.cmu.edu/webarena-images/shopping_admin_final_0719.tar" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_too_little_memory_or_disk_is_refused_with_the_numbers(engine):
    with pytest.raises(
        UsageError,
        match=r"need 4000000\.0 GB of memory \(gitlab ×2 4e\+06\) but the Docker engine "
        r"has \d+\.\d GB",
    ):
        check_resources(engine, [Need("gitlab ×2", 4e6, 1)])
    with pytest.raises(UsageError, match=r"need 9000000\.0 GB of disk .* GB free"):
        check_resources(engine, [Need("shopping", 1, 9e6)])


def test_unreachable_engine_is_one_clear_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")} | {
        "WEBRL_STATE_DIR": str(tmp_path),
        "DOCKER_HOST": NO_ENGINE,
    }
    for args in (["images", "list"], ["down", "--purge"]):
        result = webrl(env, *args)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [
            (
                f"error: the Docker engine is not reachable at {NO_ENGINE}: start it (as root: `dockerd &`, or "
                f"`systemctl start docker`; scripts/install-docker.sh installs and starts one), or point DOCKER_HOST "
                f"at a running engine"
            )
        ]


# -- the real WebArena images, as far as they can be checked without them -----------------------------------


def test_webarena_site_choices(tmp_path):
    backend = DockerBackend(load_config(flags={"state_dir": tmp_path}, environ={}), "webarena")
    assert backend.plan().sites == ["shopping", "shopping_admin", "reddit", "gitlab"]  # map needs its data
    config = load_config(flags={"state_dir": tmp_path, "sites.sites": ["homepage"]}, environ={})
    with pytest.raises(UsageError, match="no WebArena image for 'homepage'"):
        DockerBackend(config, "webarena").plan()
    public = load_config(
        flags={"state_dir": tmp_path, "sites.host": "0.0.0.0", "sites.public_host": "wa.example"}, environ={}
    )
    plan = DockerBackend(public, "webarena").plan()
    assert plan.site_url("shopping", 0) == "http://wa.example:7770" and plan.host == "0.0.0.0"
    assert configure_commands("shopping", plan.origin("shopping", 0))[0].argv[-1] == "--base-url=http://wa.example:7770"


def test_the_map_runs_on_its_data_volumes(stand_in, engine, tmp_path):
    """The map's data (~60 GB) lives in the nine volumes WebArena-Verified's setup makes: missing ones are named,
    and the container mounts them (empty ones here)."""
    stand_in("map", "verified")
    backend = DockerBackend(docker_config(tmp_path, sites=["map"]), "webarena")
    names = list(WEBARENA["map"].volumes)
    made = [name for name in names if name not in {v.name for v in engine.volumes.list()}]
    with pytest.raises(UsageError, match=re.escape(f"data volumes are missing ({', '.join(made)}); WebArena-Verified")):
        backend.up()
    try:
        for name in made:
            engine.volumes.create(name)
        with pytest.raises(UsageError, match="run it with --instances 1"):
            DockerBackend(docker_config(tmp_path, sites=["map"], instances=2), "webarena").up()
        [status] = backend.up()
        assert status.healthy
        mounts = {m["Name"]: m["Destination"] for m in container(engine, backend, "0-map").attrs["Mounts"]}
        assert mounts == WEBARENA["map"].volumes
    finally:
        backend.down()
        backend.purge()
        for name in made:
            engine.volumes.get(name).remove()


def test_configuration_commands_carry_the_base_url():
    url = "http://127.0.0.1:8770"
    shopping = [c.argv for c in configure_commands("shopping", url)]
    assert ("/var/www/magento2/bin/magento", "setup:store-config:set", f"--base-url={url}") in shopping
    assert any(f'value="{url}/" WHERE path = "web/secure/base_url"' in a[-1] for a in shopping)  # VAB wrote :7775
    assert shopping[-1][-1] == "cache:flush"
    [indexers] = [a for a in shopping if "indexer:set-mode" in a]
    assert indexers[2] == "schedule" and len(indexers[3:]) == 11 and "catalogsearch_fulltext" in indexers  # VAB's
    admin = [" ".join(c.argv) for c in configure_commands("shopping_admin", url + "/")]
    assert any("admin/security/password_is_forced 0" in a for a in admin)
    assert any("admin/security/password_lifetime 0" in a for a in admin) and admin[-1].endswith("cache:flush")
    assert configure_commands("gitlab", url)[-1].argv == ("gitlab-ctl", "reconfigure")
    assert configure_commands("map", url) == []


def test_text_edits_of_the_configuration_work_in_a_container(engine, base_image):
    """The GitLab and Postmill edits are plain sed/sh: run them for real on stand-in files in a container."""
    url = "http://127.0.0.1:9023"
    commands = [
        c for c in configure_commands("gitlab", url) + configure_commands("reddit", url) if c.argv[0] in ("sed", "sh")
    ]
    setup = (
        "mkdir -p /etc/gitlab /var/www/html/src/DataObject && "
        "printf \"external_url 'http://localhost:8023'\\n# puma['worker_processes'] = 2\\n"
        "puma['worker_processes'] = 1\\nnginx['listen_port'] = 9023\\n\" > /etc/gitlab/gitlab.rb && "
        'for f in CommentData SubmissionData UserData; do printf \'/**\\n * @RateLimit(period="1 hour", '
        "max=3)\\n */\\nclass X {}\\n' > /var/www/html/src/DataObject/$f.php; done"
    )
    box = engine.containers.run(base_image, ["sleep", "120"], detach=True, remove=True)
    try:
        assert box.exec_run(["sh", "-c", setup]).exit_code == 0
        for command in commands + commands:  # twice: configuring is idempotent
            code, output = box.exec_run(list(command.argv), user=command.user)
            assert code == 0, (command, output)
        gitlab_rb = box.exec_run(["cat", "/etc/gitlab/gitlab.rb"]).output.decode()
        assert gitlab_rb.splitlines() == [
            f"external_url '{url}'",
            "# puma['worker_processes'] = 2",
            "nginx['listen_port'] = 8023",
            "puma['worker_processes'] = 4",
        ]
        comment = box.exec_run(["cat", "/var/www/html/src/DataObject/CommentData.php"]).output.decode()
        assert "RateLimit" not in comment and "class X" in comment
    finally:
        box.kill()


# The stand-ins (standins/standin.py) in one image per site, under the real image's name. Every stub and file is in
# every image; the last lines pick the site's first process.
STAND_IN = r"""FROM local/debian-py:bookworm
COPY standin.py /usr/local/bin/standin.py
RUN set -e; \
    stub() { printf '#!/bin/sh\nexec python3 /usr/local/bin/standin.py %s "$@"\n' "$2" > "$1"; chmod +x "$1"; }; \
    mkdir -p /var/www/magento2/bin /opt/gitlab/embedded/bin /etc/gitlab /var/www/html/src/DataObject \
      /var/www/html/var /srv /data /var/log/standin; \
    chmod 1777 /var/log/standin; \
    stub /var/www/magento2/bin/magento magento; stub /usr/local/bin/mysql "log mysql"; \
    stub /usr/local/bin/gitlab-ctl gitlab-ctl; stub /opt/gitlab/embedded/bin/pg_resetwal "log pg_resetwal"; \
    stub /opt/gitlab/embedded/bin/runsvdir-start runsvdir-start; \
    printf "external_url 'http://localhost:8023'\nnginx['listen_port'] = 8023\n" > /etc/gitlab/gitlab.rb; \
    useradd -r gitlab-psql; \
    for f in CommentData SubmissionData UserData; do \
      printf '/**\n * @RateLimit(period="1 hour", max=3)\n */\nclass X {}\n' > /var/www/html/src/DataObject/$f.php; \
    done; \
    chown www-data /var/www/html/var; \
    printf '#!/bin/sh\necho "$*" >> /data/php-calls\nmkdir -p /var/www/html/var/cache/prod\n' > /usr/local/bin/php; \
    chmod +x /usr/local/bin/php
"""
STAND_IN_FIRST_PROCESS = {
    "shopping": 'CMD ["python3", "/usr/local/bin/standin.py", "shop"]',
    "gitlab": 'CMD ["python3", "/usr/local/bin/standin.py", "gitlab-entrypoint"]',
    "reddit": 'VOLUME /data\nCMD ["python3", "/usr/local/bin/standin.py", "forum"]',
    "map": 'CMD ["python3", "/usr/local/bin/standin.py", "forum", "8080"]',
}
SHOP_DB_PID = "/var/run/mysqld/mysqld.pid"
GITLAB_DB_PID = "/var/opt/gitlab/postgresql/data/postmaster.pid"


@pytest.fixture
def base_image(engine) -> str:
    try:
        engine.images.get(BASE_IMAGE)
    except ImageNotFound:
        pytest.skip(f"the base image {BASE_IMAGE} is not built: run `sudo scripts/install-docker.sh`")
    return BASE_IMAGE


@pytest.fixture
def stand_in(engine, base_image, monkeypatch):
    """`stand_in(site, source, extra="")`: build the site's stand-in under the name of its WebArena-Verified
    ("verified") or original ("original") image, plus `extra` Dockerfile lines; removed at the end. Its start-up
    limit is cut to 30 s, so that code which cannot bring it up fails in seconds, not in the real image's
    minutes. Never replaces a real image."""
    built = []

    def build(site: str, source: str, extra: str = "") -> str:
        name = getattr(WEBARENA[site], source)
        try:
            engine.images.get(name)
            pytest.skip(f"{name} is here: the stand-in must not replace it")
        except ImageNotFound:
            pass
        context = io.BytesIO()
        with tarfile.open(fileobj=context, mode="w") as tar:
            dockerfile = f"{STAND_IN}{STAND_IN_FIRST_PROCESS[site]}\n{extra}".encode()
            for file, data in (("Dockerfile", dockerfile), ("standin.py", (ROOT / STAND_INS).read_bytes())):
                info = tarfile.TarInfo(file)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        context.seek(0)
        engine.images.build(fileobj=context, custom_context=True, tag=name, rm=True)
        built.append(name)
        monkeypatch.setitem(WEBARENA, site, dataclasses.replace(WEBARENA[site], startup_s=30))
        return name

    yield build
    for name in built:
        engine.images.remove(name, force=True)


def run_in(engine, image: str, script: str) -> str:
    """The output of `script` in a throwaway container of `image` (a snapshot, say)."""
    return engine.containers.run(image, ["sh", "-c", script], remove=True).decode()


def test_the_real_image_path_with_a_stand_in_image(stand_in, engine, tmp_path):
    name = stand_in("reddit", "verified")
    backend = DockerBackend(docker_config(tmp_path, sites=["reddit"]), "webarena")
    try:
        [status] = backend.up()
        assert status.healthy and status.writes_since_reset is None
        assert backend.running().site_images == {"reddit": name}
        first = container(engine, backend, "0-reddit")
        edited = first.exec_run(["cat", "/var/www/html/src/DataObject/UserData.php"]).output.decode()
        assert "RateLimit" not in edited  # configured before the snapshot was committed
        assert first.exec_run(["cat", "/data/php-calls"]).output.decode().split() == [
            "/var/www/html/bin/console",
            "cache:clear",
            "--env=prod",
        ]
        # The cache that the clearing (as root) rebuilt belongs to the web server's user again.
        assert (
            first.exec_run(["stat", "-c", "%U", "/var/www/html/var/cache/prod"]).output.decode().strip() == "www-data"
        )
        assert not backend.is_dirty("reddit", 0) and backend.is_dirty("reddit", 0)  # asking hands it out
        backend.reset(["reddit"], 0)
        second = container(engine, backend, "0-reddit")
        assert second.id != first.id and backend.is_dirty("reddit", 0)  # the env uses what it resets
        assert "RateLimit" not in second.exec_run(["cat", "/var/www/html/src/DataObject/UserData.php"]).output.decode()
        # The volume comes fresh from the image, so the configuration ran again on it.
        assert second.exec_run(["cat", "/data/php-calls"]).output.decode().count("cache:clear") == 1
        [old_volume] = [m["Name"] for m in first.attrs["Mounts"] if m["Type"] == "volume"]
        with pytest.raises(NotFound):  # removed with its container: resets leave no volumes behind
            engine.volumes.get(old_volume)
    finally:
        backend.down()
        assert backend.purge() == 1


def forum_task(task_id: int, eval_types: list[str]) -> Task:
    check = {"url": "last", "locator": "", "required_contents": {"must_include": ["x"]}}
    checks = {"string_match": {"reference_answers": {"exact_match": "x"}}, "program_html": {"program_html": [check]}}
    spec = {"eval_types": eval_types, "reference_answers": None, "reference_url": "", "program_html": []}
    for kind in eval_types:
        spec |= checks[kind]
    return Task.model_validate(
        {
            "task_id": task_id,
            "sites": ["reddit"],
            "start_url": "__REDDIT__",
            "intent": "x",
            "require_login": False,
            "storage_state": None,
            "eval": spec,
        }
    )


def test_tasks_that_only_read_share_a_real_site(stand_in, engine, tmp_path):
    """Recreating a real site takes minutes, and on Magento almost every visit writes: tasks answered by a string
    only read, so they share the site; a task checked on the site's state (program_html) gets one that no such
    task used since its reset. `sites.reset_when: episode` resets before every episode after the first."""
    from webrl.env.browser_env import BrowserEnv

    stand_in("reddit", "verified")
    read, write = forum_task(1, ["string_match"]), forum_task(2, ["program_html"])
    assert not read.writes and write.writes
    backend = DockerBackend(docker_config(tmp_path, sites=["reddit"]), "webarena")
    env = BrowserEnv(None, backend, 0)

    def resets(task) -> list[str]:
        return env._reset_sites(task)[1]

    try:
        backend.up()
        first = container(engine, backend, "0-reddit").id
        assert [resets(t) for t in (read, read, write, read, read)] == [[], [], [], [], []]
        assert container(engine, backend, "0-reddit").id == first and backend.reset_policy == "writing-task"
        assert resets(write) == ["reddit"] and resets(read) == [] and resets(write) == ["reddit"]
        every = DockerBackend(docker_config(tmp_path, sites=["reddit"], reset_when="episode"))
        assert BrowserEnv(None, every, 0)._reset_sites(read)[1] == ["reddit"] and every.reset_policy == "every-episode"
    finally:
        backend.down()
        backend.purge()


def test_an_unconfigured_shop_that_redirects_to_its_old_host_comes_up(stand_in, engine, tmp_path):
    """The original Magento image answers 302 to WebArena's original host (metis.lti.cs.cmu.edu, which does not
    resolve here) until its base URL is set. Two instances on their own ports, each configured with its own base
    URL (on the public host name) and VAB's eleven named indexers on schedule, from snapshots committed after the
    shop's database shut down cleanly (no pid file left in them)."""
    stand_in("shopping", "original")
    backend = DockerBackend(
        docker_config(tmp_path, sites=["shopping"], instances=2, public_host="localhost"), "webarena"
    )
    try:
        assert [s.healthy for s in backend.up()] == [True, True]
        for k in (0, 1):
            box = container(engine, backend, f"{k}-shopping")
            assert box.exec_run(["cat", "/etc/standin/base_url"]).output.decode() == backend.plan().origin(
                "shopping", k
            )
            assert box.image.tags[0].startswith("webrl-snapshot/")
            assert run_in(engine, box.image.id, f"test -e {SHOP_DB_PID} && echo stale || echo clean") == "clean\n"
            # VAB's named indexers (not all of them) are on schedule in the snapshot, set once before it.
            modes = run_in(engine, box.image.id, "cd /etc/standin/indexers && grep -H . *").split()
            assert modes == [f"{name}:schedule" for name in sorted(MAGENTO_SCHEDULED_INDEXERS)]
            log = box.exec_run(["cat", "/var/log/standin/magento"]).output.decode().splitlines()
            assert [line.split()[:2] for line in log].count(["indexer:set-mode", "schedule"]) == 1
    finally:
        backend.down()
        backend.purge()


@pytest.mark.parametrize("source", ["original", "verified"])
def test_gitlab_on_other_ports_from_clean_snapshots_without_reconfiguring(source, stand_in, engine, tmp_path):
    """Both GitLab images' nginx listens on 8023 until a `gitlab-ctl reconfigure` moves it to the port of its
    external URL; the verified image's entrypoint reconfigures at every start whose URL is not its default. Two
    instances (so one on a port other than 8023): each is reconfigured exactly once, before its snapshot, and not
    again when it is reset; the snapshots hold no PostgreSQL pid file, so the 502 fix (pg_resetwal) never runs."""
    stand_in("gitlab", source)
    backend = DockerBackend(docker_config(tmp_path, sites=["gitlab"], instances=2), "webarena")

    def reconfigures(k: int) -> int:
        calls = container(engine, backend, f"{k}-gitlab").exec_run(["cat", "/var/log/standin/gitlab-ctl"])
        return calls.output.decode().split().count("reconfigure")

    try:
        assert [s.healthy for s in backend.up()] == [True, True]
        assert backend.plan().ports["gitlab"][1] != 8023
        for k in (0, 1):
            box = container(engine, backend, f"{k}-gitlab")
            assert reconfigures(k) == 1
            assert run_in(engine, box.image.id, f"test -e {GITLAB_DB_PID} && echo stale || echo clean") == "clean\n"
            assert box.exec_run(["test", "-e", "/var/log/standin/pg_resetwal"]).exit_code == 1
        backend.reset(["gitlab"], 1)
        assert reconfigures(1) == 1 and all(s.healthy for s in backend.status())
    finally:
        backend.down()
        backend.purge()


def test_gitlabs_502_fix_runs_when_postgresql_reports_a_stale_pid_file(stand_in, engine, tmp_path, monkeypatch):
    """An image that ships PostgreSQL's pid file (the original may: the README's 502 fix): PostgreSQL refuses to
    start, saying so in its log, and GitLab answers 502. The fix runs once, when the start-up time is up: the pid
    file removed, pg_resetwal as the database's owner (webarena PR #233), a restart; the snapshot is clean, so a
    reset needs no fix."""
    stand_in("gitlab", "original", f"RUN mkdir -p {os.path.dirname(GITLAB_DB_PID)} && echo 4242 > {GITLAB_DB_PID}")
    monkeypatch.setitem(WEBARENA, "gitlab", dataclasses.replace(WEBARENA["gitlab"], startup_s=5))
    backend = DockerBackend(docker_config(tmp_path, sites=["gitlab"]), "webarena")

    def resetwal_calls() -> list[str]:
        box = container(engine, backend, "0-gitlab")
        owner = box.exec_run(["stat", "-c", "%U", "/var/log/standin/pg_resetwal"]).output.decode().strip()
        calls = box.exec_run(["cat", "/var/log/standin/pg_resetwal"]).output.decode().splitlines()
        return [f"{owner}: {call}" for call in calls]

    try:
        [status] = backend.up()
        assert status.healthy
        assert resetwal_calls() == [f"gitlab-psql: -f {os.path.dirname(GITLAB_DB_PID)}"]
        snapshot = container(engine, backend, "0-gitlab").image.id
        assert run_in(engine, snapshot, f"test -e {GITLAB_DB_PID} && echo stale || echo clean") == "clean\n"
        backend.reset(["gitlab"], 0)
        assert resetwal_calls() == [f"gitlab-psql: -f {os.path.dirname(GITLAB_DB_PID)}"]  # the snapshot's one
        assert all(s.healthy for s in backend.status())
    finally:
        backend.down()
        backend.purge()


def test_up_on_sites_that_are_up_checks_containers_and_snapshots(stand_in, engine, tmp_path):
    """`up` again: a container that died is recreated from its snapshot, and sites whose snapshot is gone start
    over (configured and committed again) instead of being reported up."""
    stand_in("reddit", "verified")
    backend = DockerBackend(docker_config(tmp_path, sites=["reddit"]), "webarena")
    try:
        backend.up()
        first = container(engine, backend, "0-reddit")
        snapshot = first.image.id
        first.kill()
        [status] = backend.up()
        assert status.healthy and container(engine, backend, "0-reddit").image.id == snapshot
        container(engine, backend, "0-reddit").remove(force=True, v=True)  # as a reset does
        engine.images.remove(snapshot, force=True)
        [status] = backend.up()
        again = container(engine, backend, "0-reddit")
        assert status.healthy and again.image.id != snapshot and again.image.tags[0].startswith("webrl-snapshot/")
        assert "RateLimit" not in again.exec_run(["cat", "/var/www/html/src/DataObject/UserData.php"]).output.decode()
    finally:
        backend.down()
        backend.purge()


def test_a_killed_up_is_started_over_by_the_next(stand_in, engine, cli_env):
    """`webrl up` is SIGKILLed while it brings the shop up; the next `up` must not trust what it left."""
    stand_in("shopping", "original")
    up = subprocess.Popen(
        [sys.executable, "-m", "webrl", "up", "--backend", "docker", "--sites", "shopping"],
        env=cli_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    config = load_config(flags={"sites.sites": ["shopping"]}, environ=cli_env)
    backend = DockerBackend(config)
    try:
        for _ in range(600):
            if engine.containers.list(filters={"label": f"{LABEL_OWNER}={backend.owner}"}) or up.poll() is not None:
                break
            time.sleep(0.1)
        up.kill()
        up.wait()
        assert backend.files.exists()  # the record it left
        [status] = DockerBackend(config, "webarena").up()
        assert status.healthy and backend.running() is not None
        box = container(engine, backend, "0-shopping")
        assert box.image.tags[0].startswith("webrl-snapshot/")
        assert box.exec_run(["cat", "/etc/standin/base_url"]).output.decode() == backend.plan().origin("shopping", 0)
    finally:
        backend.down()
        backend.purge()


def test_slow_engine_operations_do_not_time_out(stand_in, engine, tmp_path, monkeypatch):
    """Committing a forum whose writable layer holds 600 MB takes seconds here, and a real site's minutes. Every
    client timeout is cut twentyfold (a minute becomes 3 s), which the commit outlasts: only the queries may give
    up that soon."""
    stand_in(
        "reddit",
        "verified",
        'CMD ["sh", "-c", "head -c 600000000 /dev/urandom > /ballast && exec python3 /usr/local/bin/standin.py forum"]',
    )
    from_env = docker.from_env
    monkeypatch.setattr(docker, "from_env", lambda timeout, **kw: from_env(timeout=timeout / 20, **kw))
    backend = DockerBackend(docker_config(tmp_path, sites=["reddit"]), "webarena")
    try:
        [status] = backend.up()
        assert status.healthy
    finally:
        backend.down()
        backend.purge()


def test_compose_file_matches_the_backend():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"shopping", "shopping_admin", "reddit", "gitlab", "map", "homepage", "wikipedia"}
    assert services["wikipedia"]["profiles"] == ["wikipedia"] and services["map"]["profiles"] == ["map"]
    for name, service in services.items():
        assert service["healthcheck"]["test"] and service["mem_limit"], name
        if name in WEBARENA:
            assert service["image"] == f"${{WA_{name.upper()}_IMAGE:-{WEBARENA[name].verified}}}"
            assert f":-{DEFAULT_PORTS[name]}}}:" in service["ports"][0]
            assert service["mem_limit"] == f"{WEBARENA[name].memory_gb:g}g"
    assert services["gitlab"]["shm_size"] == "2gb"
    assert services["map"]["volumes"] == [f"{name}:{path}" for name, path in WEBARENA["map"].volumes.items()]
    assert compose["volumes"] == {name: {"external": True} for name in WEBARENA["map"].volumes}
    assert "/users/sign_in" in " ".join(services["gitlab"]["healthcheck"]["test"])
    homepage = services["homepage"]["environment"]
    assert {k: v for k, v in homepage.items() if k.startswith("WEBRL_SITES__PORTS__")} == {
        f"WEBRL_SITES__PORTS__{s.upper()}": f"${{WA_{s.upper()}_PORT:-{p}}}"
        for s, p in DEFAULT_PORTS.items()
        if s in WEBARENA_SITES and s != "homepage"
    }
    tool = compose_tool()
    if tool:  # a real Compose implementation accepts it, profiles included
        for profile in ([], ["--profile", "map", "--profile", "wikipedia"]):
            check = subprocess.run(
                [*tool, "-f", str(ROOT / "compose.yaml"), *profile, "config", "-q"],
                capture_output=True,
                text=True,
                check=False,
            )
            assert check.returncode == 0, check.stderr


def compose_tool() -> list[str] | None:
    """Compose v2 (`docker compose`) or v1 (`docker-compose`, Debian's package), whichever is here."""
    if (
        shutil.which("docker")
        and subprocess.run(["docker", "compose", "version"], capture_output=True, check=False).returncode == 0
    ):
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None
