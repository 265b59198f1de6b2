"""Shared fixtures: the real embedded server on free ports, a real Chromium via Playwright, and the environment
for running the `webrl` command as a user does (cli_support.webrl)."""

from __future__ import annotations

import os

import pytest
from cli_support import private_env

from webrl.config import load_config, on_free_ports
from webrl.sites.embedded.backend import EmbeddedBackend, up_on_free_ports

# The tests' Ray clusters stay on loopback. Ray's switch for single-machine clusters (named for Windows and macOS) makes
# a node and a driver take 127.0.0.1 as this machine's address, not the interface's; Ray reads it when imported, and
# every process a test starts inherits it.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


@pytest.fixture(scope="session")
def suite_state(tmp_path_factory):
    """The state dir that `suite` is built (and cached) in."""
    return tmp_path_factory.mktemp("suite")


@pytest.fixture(scope="session")
def suite(suite_state):
    """The embedded suite (the sites' seed 0), built once per test session."""
    from webrl.sites.embedded.suite import cached_suite

    return cached_suite(suite_state)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """The folder of the `tiny` model (a ~0.8M-parameter random Llama with a byte-level BPE tokenizer), built
    once per test session."""
    from webrl.policy.models import resolve_model

    return resolve_model("tiny", tmp_path_factory.mktemp("models"))


@pytest.fixture
def cli_env(tmp_path):
    """Environment for a private state dir with every port moved to a free one."""
    return private_env(tmp_path / "state")


def private_config(state_dir, **sites_settings):
    """A Config of `state_dir` and these sites settings, whatever the environment says."""
    flags = {"state_dir": state_dir, **{f"sites.{key}": value for key, value in sites_settings.items()}}
    return load_config(flags=flags, environ={})


def free_ports_config(state_dir, **sites_settings):
    """A Config on free ports, so tests never collide with a user's sites or each other (for a test that starts
    and stops the sites itself; the sites of one up: up_on_free_ports)."""
    return on_free_ports(private_config(state_dir, **sites_settings))


@pytest.fixture(scope="session")
def site_servers(tmp_path_factory):
    """`site_servers("reddit")`: a real background server for those sites, started once per test session
    (each set of sites and instances gets its own server, state dir and free ports)."""
    started: dict[tuple, EmbeddedBackend] = {}

    def serve(*sites: str, instances: int = 1) -> EmbeddedBackend:
        key = (sites, instances)
        if key not in started:
            config = private_config(tmp_path_factory.mktemp("state"), sites=list(sites), instances=instances)
            started[key] = up_on_free_ports(config)
        return started[key]

    yield serve
    for backend in started.values():
        backend.down()


@pytest.fixture
def pristine_store(site_servers):
    """The shop and its admin, reset to the pristine snapshot before the test."""
    backend = site_servers("shopping", "shopping_admin")
    backend.reset()
    return backend


@pytest.fixture(scope="module")
def browser():
    """A sync-API Chromium for one test module. Not session-wide: sync Playwright runs an event loop in
    this thread while it lives, and the async tests (asyncio.run) of later modules need the thread free."""
    from playwright.sync_api import sync_playwright

    from webrl.browser import launch_chromium

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def make_config():
    """`make_config(state_dir, **sites_settings)`: a Config on free ports."""
    return free_ports_config


@pytest.fixture
def run_oracle(tmp_path):
    """`run_oracle(backend, tasks)`: run the oracle policy over tasks with the real harness (`webrl eval`'s
    runner) and return {task_id: episode record}."""
    import asyncio
    import json

    from webrl.policy.factory import make_policy
    from webrl.runs.eval import EvalSettings, run_eval
    from webrl.runs.executor import LocalExecutor

    def run(backend, tasks, **settings):
        out = tmp_path / f"oracle-{len(list(tmp_path.iterdir()))}"
        config = EvalSettings(tasks="in-memory", policy="oracle", out=out, screenshots=False, **settings)
        asyncio.run(run_eval(config, tasks, LocalExecutor(backend, make_policy("oracle"))))
        rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        return {row["task_id"]: row for row in rows}

    return run


@pytest.fixture(scope="session")
def ray_cluster():
    """A real three-node Ray cluster on this machine: a head with no CPUs for work, two nodes with one CPU and one
    unit of the environment resource `webrl_env` each (skipped without the cluster extra)."""
    cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the cluster extra (pip install '.[cluster]')")
    head = {"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=head)
    for _ in range(2):
        cluster.add_node(num_cpus=1, resources={"webrl_env": 1}, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    yield cluster
    import ray

    ray.shutdown()  # where a test joined it from this process
    cluster.shutdown()
