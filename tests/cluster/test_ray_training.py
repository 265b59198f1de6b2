"""Training ranks on a Ray cluster: the folder check. (Two ranks across two nodes against one process is in
tests/rl/test_sft_update.py, beside the launcher's test, on the session's cluster fixture.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from cli_support import webrl

cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the cluster extra (pip install '.[cluster]')")

# A node of the cluster at argv[1], on loopback, until SIGTERM (`ray start` refuses to join a loopback cluster:
# tests/conftest.py); it stops its processes on the way out.
JOIN = """import signal, sys
from ray._private.node import Node
from ray._private.parameter import RayParams
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
params = RayParams(gcs_address=sys.argv[1], node_ip_address="127.0.0.1", num_cpus=1, include_log_monitor=False)
Node(params, head=False, shutdown_at_exit=True, spawn_reaper=True)
signal.sigwait({signal.SIGTERM})
"""


def can_hide_folders() -> bool:
    """Whether this machine lets a process tree mount a private file system over a folder (root, unshare)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow  # ~20 s: a cluster of its own
@pytest.mark.skipif(not can_hide_folders(), reason="needs unshare -m (root) to give a node a private folder")
def test_a_training_folder_one_node_cannot_see_is_refused(tmp_path):
    """A node whose processes see an empty private file system over the run's folder (as a node with a private
    /tmp, or without the shared mount, does): the training is refused before any rank starts, naming the folder."""
    import ray

    hidden = tmp_path / "shared"
    hidden.mkdir()
    (hidden / "demos.jsonl").write_text("")
    head = {"num_cpus": 0, "include_dashboard": False, "node_ip_address": "127.0.0.1"}
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=head)
    cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
    join = f'{sys.executable} -c "$0" {cluster.address}'
    private = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", f"mount -t tmpfs none {hidden} && exec {join}", JOIN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ray.shutdown()  # an earlier test in this process may still be a driver of the session's cluster
        ray.init(address=cluster.address, logging_level="ERROR")
        deadline = time.monotonic() + 60
        while ray.cluster_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ray.cluster_resources().get("CPU", 0) == 2, "the private node did not join"
        ray.shutdown()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")} | {
            "WEBRL_STATE_DIR": str(tmp_path / "state")
        }
        args = ["--data", str(hidden / "demos.jsonl"), "--model", "tiny", "--out", str(hidden / "sft")]
        result = webrl(env, "sft", *args, "--executor", "ray", "--ray-address", cluster.address, "--nodes", "2")
        assert result.returncode == 2, result.stderr
        assert f"{hidden / 'sft'}: node" in result.stderr and "cannot see this folder" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    finally:
        ray.shutdown()
        private.terminate()
        private.wait(timeout=30)
        cluster.shutdown()
