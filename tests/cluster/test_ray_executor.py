"""`--executor ray` on a real local Ray cluster: a head and two worker nodes on this machine, each worker node
offering one unit of the environment resource (no mock of Ray). The runs are `webrl eval` commands, as a user
runs them, over MiniWoB++ tasks (fast); the local executor's runs are the reference."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import webrl

pytest.importorskip("ray", reason="the cluster extra (pip install '.[cluster]')")

TASKS = ("--tasks", "miniwob:test", "--limit", "12")


@pytest.fixture(scope="module")
def driver_env(tmp_path_factory):
    """A driver's environment: a state dir of its own, without sites (the workers start theirs), shared by the
    module's runs (its MiniWoB++ task set is built once)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")}
    return env | {"WEBRL_STATE_DIR": str(tmp_path_factory.mktemp("driver-state")), "COLUMNS": "200"}


def ray_eval(env, cluster, out, *args, timeout=180):
    return webrl(
        env, "eval", *TASKS, "--executor", "ray", "--ray-address", cluster.address, "--out", str(out), *args,
        timeout=timeout,
    )  # fmt: skip


def local_eval(backend, out, *args, timeout=180):
    env = dict(os.environ, WEBRL_STATE_DIR=str(backend.config.state_dir), COLUMNS="200")
    return webrl(env, "eval", *TASKS, "--out", str(out), *args, timeout=timeout)


def rows(out) -> dict:
    """What an episode's result is, per (task, repeat): the timings and ports differ between machines."""
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == len({(r["task_id"], r["repeat"]) for r in records}), "an episode was recorded twice"
    return {
        (r["task_id"], r["repeat"]): (
            r["status"],
            r["score"],
            r["answer"],
            [(s["response"], s["action"], s["error"]) for s in r["steps"]],
        )
        for r in records
    }


def worker_pids() -> list[int]:
    found = subprocess.run(["pgrep", "-f", "^ray::EnvWorker"], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def wait_for_lines(path, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path}: fewer than {count} episodes after {timeout_s} s")


@pytest.mark.slow  # ~30 s: a local and a Ray run of 12 episodes
def test_ray_runs_give_the_local_rows(ray_cluster, site_servers, driver_env, tmp_path):
    local = local_eval(site_servers("miniwob", instances=2), tmp_path / "local", "--parallel", "2")
    assert local.returncode == 0, local.stderr
    ray = ray_eval(driver_env, ray_cluster, tmp_path / "ray")
    assert ray.returncode == 0, ray.stderr
    assert rows(tmp_path / "ray") == rows(tmp_path / "local")
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["episodes"] == {"planned": 12, "done": 12, "missing": 0, "requeued": 0}
    workers = summary["executor"]["workers"]
    assert summary["executor"]["kind"] == "ray" and len(workers) == 2 and len({w["pid"] for w in workers}) == 2
    shots = {
        s["screenshot"] for line in (tmp_path / "ray" / "episodes.jsonl").open() for s in json.loads(line)["steps"]
    }
    assert shots and all((tmp_path / "ray" / shot).stat().st_size > 1000 for shot in shots)  # written by the driver
    assert not worker_pids(), "the workers outlived the run"


@pytest.mark.slow  # ~40 s: hf:tiny sampled locally and on the cluster
def test_seeded_sampled_answers_are_the_same_on_the_cluster(ray_cluster, site_servers, tiny, driver_env, tmp_path):
    sampled = ("--policy", f"hf:{tiny}", "--temperature", "1", "--seed", "7", "--max-steps", "3", "--max-tokens", "24")
    local = local_eval(site_servers("miniwob"), tmp_path / "local", *sampled)
    assert local.returncode == 0, local.stderr
    ray = ray_eval(driver_env, ray_cluster, tmp_path / "ray", *sampled, timeout=360)  # hf: sampling on 1-CPU nodes
    assert ray.returncode == 0, ray.stderr
    assert rows(tmp_path / "ray") == rows(tmp_path / "local")
    assert len({r[3][0][0] for r in rows(tmp_path / "ray").values()}) > 1  # sampled: the answers differ


@pytest.mark.slow  # ~40 s: two runs of groups on the cluster
def test_group_members_start_from_identical_states_on_the_cluster(ray_cluster, driver_env, tmp_path):
    """Three members of each task spread over both workers: every member's first page is the same, on MiniWoB++
    (the task's seed) and on the embedded shop's admin, where each member's price change is reset before the next
    member starts."""
    smoke = json.loads((Path(__file__).parents[2] / "sites/embedded/tasks/smoke.json").read_text())
    tasks = tmp_path / "writes.json"
    tasks.write_text(json.dumps([task for task in smoke if task["task_id"] == 4]))
    runs = {
        "miniwob": ("--tasks", "miniwob:test", "--limit", "2", "--policy", "random:0", "--max-steps", "2"),
        "shop": ("--tasks", str(tasks), "--policy", "oracle"),
    }
    for name, args in runs.items():
        out = tmp_path / name
        on_ray = ("--executor", "ray", "--ray-address", ray_cluster.address)
        result = webrl(driver_env, "eval", *args, "--repeats", "3", *on_ray, "--out", str(out), timeout=240)
        assert result.returncode == 0, result.stderr
        records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
        starts: dict = {}
        for record in records:
            starts.setdefault(record["task_id"], []).append(record["steps"][0]["observation"])
        assert all(len(pages) == 3 and len(set(pages)) == 1 for pages in starts.values()), name
    # the oracle's price change is found and reset by the next member on its worker, and never shown at a start
    # (the run's score is not: a worker starts only the sites its tasks name, and this evaluator reads the shop's)
    assert any("shopping_admin" in r["reset"]["reset_sites"] for r in records)
    assert not any("27.50" in r["steps"][0]["observation"] for r in records)


@pytest.mark.slow  # ~30 s
def test_a_dead_worker_s_episode_is_played_again_by_the_other(ray_cluster, driver_env, tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "webrl", "eval", *TASKS, "--executor", "ray"]
    command += ["--ray-address", ray_cluster.address, "--out", str(out)]
    run = subprocess.Popen(command, env=driver_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_lines(out / "episodes.jsonl", 2)
    victim = worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    _, err = run.communicate(timeout=180)
    assert run.returncode == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == {"planned": 12, "done": 12, "missing": 0, "requeued": 1}
    assert len(rows(out)) == 12  # every episode judged exactly once
    time.sleep(1.5)  # the killed worker's site server notices within a second that its owner is gone
    servers = subprocess.run(["pgrep", "-f", "embedded.server .*webrl-worker-"], capture_output=True, text=True)
    assert not servers.stdout.split(), "a dead worker's site server is still running"


@pytest.mark.slow  # ~30 s
def test_a_killed_driver_resumes_to_the_same_totals(ray_cluster, driver_env, tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "webrl", "eval", *TASKS, "--executor", "ray"]
    command += ["--ray-address", ray_cluster.address, "--out", str(out)]
    run = subprocess.Popen(command, env=driver_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_lines(out / "episodes.jsonl", 3)
    run.kill()
    run.wait()
    resumed = ray_eval(driver_env, ray_cluster, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == {"planned": 12, "done": 12, "missing": 0, "requeued": 0}
    assert summary["success_rate"]["Average"]["mean"] == 100.0  # the oracle solves every one of them
    assert len(rows(out)) == 12


def test_an_address_nobody_answers_on_is_one_line(driver_env, tmp_path):
    result = webrl(
        driver_env, "eval", *TASKS, "--executor", "ray", "--ray-address", "127.0.0.1:1", "--out", str(tmp_path)
    )
    assert result.returncode == 2, result.stderr
    assert "--ray-address 127.0.0.1:1: no Ray cluster answers there" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_cluster_without_the_environment_resource_is_refused(ray_cluster, driver_env, tmp_path):
    env = driver_env | {"WEBRL_CLUSTER__ENV_RESOURCE": "browser_host"}
    result = ray_eval(env, ray_cluster, tmp_path / "run")
    assert result.returncode == 2, result.stderr
    assert "no node of the Ray cluster" in result.stderr and "'browser_host'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_without_ray_the_ray_executor_says_what_to_install(driver_env, tmp_path):
    """Ray hidden from the interpreter (as on an install without the cluster extra)."""
    code = "import sys; sys.modules['ray'] = None; from webrl.cli.main import run; run()"
    args = ["eval", *TASKS, "--executor", "ray", "--out", str(tmp_path / "run")]
    result = subprocess.run(
        [sys.executable, "-c", code, *args], env=driver_env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2, result.stderr
    assert "--executor ray needs Ray" in result.stderr and "pip install 'webrl[cluster]'" in result.stderr


def test_the_local_executor_never_imports_ray(site_servers, tmp_path):
    """A whole local eval, then a look at what the process imported."""
    backend = site_servers("miniwob")
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('RAY' if 'ray' in sys.modules else 'NO RAY'))\n"
        "from webrl.cli.main import run; run()\n"
    )
    args = ["eval", "--tasks", "miniwob:click-button:test", "--limit", "1", "--out", str(tmp_path / "run")]
    env = dict(os.environ, WEBRL_STATE_DIR=str(backend.config.state_dir))
    result = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("NO RAY")


def test_doctor_shows_the_cluster_s_nodes(ray_cluster, driver_env):
    result = webrl(driver_env, "doctor", "--ray-address", ray_cluster.address)
    assert f"Ray cluster at {ray_cluster.address}" in result.stdout, result.stderr
    assert "webrl_env" in result.stdout and "2 environment worker(s) fit; 3 node(s)" in result.stdout


@pytest.mark.slow  # ~15 s
def test_the_critic_filter_s_start_pages_come_from_the_workers(ray_cluster, site_servers, tmp_path):
    """The training loop's other use of browsers: the start pages it scores tasks on, observed on the cluster."""
    from webrl.curriculum.filters import start_pages
    from webrl.sites.task_sets import resolve_task_set

    local = site_servers("miniwob")
    tasks = resolve_task_set("miniwob:click-button,enter-text:test", local.config.state_dir)[:4]
    cluster = local.config.cluster.model_copy(update={"executor": "ray", "address": ray_cluster.address})
    on_ray = type(local)(local.config.model_copy(update={"cluster": cluster}))
    assert start_pages(tasks, on_ray) == start_pages(tasks, local)


def test_the_cluster_and_the_sites_stay_on_loopback(ray_cluster, site_servers):
    """Every node of the test cluster registers at 127.0.0.1, and no process the tests started (the Ray nodes and
    their workers, the site servers, this driver) listens on or talks to any other address."""
    import ipaddress

    import psutil
    import ray

    from webrl.cluster import connect

    site_servers("miniwob")
    connect(ray_cluster.address)
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}

    def loopback(ip: str) -> bool:
        address = ipaddress.ip_address(ip.partition("%")[0])
        return (getattr(address, "ipv4_mapped", None) or address).is_loopback

    seen, strays = set(), []
    for process in [psutil.Process(), *psutil.Process().children(recursive=True)]:
        try:
            server = "webrl.sites.embedded.server" in process.cmdline()
            name, sockets = "site server" if server else process.name(), process.net_connections(kind="inet")
        except psutil.NoSuchProcess:
            continue
        for sock in sockets:
            seen.add(name)
            ends = [sock.laddr.ip, *([sock.raddr.ip] if sock.raddr else [])]
            strays += [
                f"{name} ({process.pid}): {sock.laddr} -> {sock.raddr or 'listening'}"
                for ip in ends
                if not loopback(ip)
            ]
    assert {"gcs_server", "raylet", "site server"} <= seen, seen
    assert strays == []
