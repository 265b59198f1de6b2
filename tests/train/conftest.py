"""The training tests' sites: a private state dir with every embedded site up, in a process environment shaped like
a trainer's."""

from __future__ import annotations

import socket

import pytest
from cli_support import private_env, webrl


@pytest.fixture(scope="package")
def sites(tmp_path_factory):
    """A private state dir with the sites up (the ci preset runs one episode at a time). The environment also
    holds a process group's variables, as a process that trained in-process (an earlier test's Engine) has them,
    with its port taken: the run's training children must start their own group, not join that one."""
    env = private_env(tmp_path_factory.mktemp("train") / "state")
    env["OMP_NUM_THREADS"] = "1"  # two shared cores: one thread each for the browser, the sites and torch
    with socket.socket() as group:
        group.bind(("127.0.0.1", 0))
        group.listen()
        env |= {
            "RANK": "0",
            "WORLD_SIZE": "1",
            "LOCAL_RANK": "0",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(group.getsockname()[1]),
        }
        started = webrl(env, "up")
        assert started.returncode == 0, started.stderr
        yield env
        webrl(env, "down")
