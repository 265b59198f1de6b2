"""`webrl serve` through openenv-core's own client: the oracle's actions, played over WebSocket sessions at once,
score what `webrl eval --policy oracle` scores on the same tasks; sessions hold different site instances; a write
is reset before the next episode; bad input is an error message and the server goes on; an idle session is ended
and frees its instance; remote use needs the token; bad options are one-line errors; TRL's GRPO trainer trains on
served episodes (examples/trl_grpo_miniwob.py)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient
from websockets.asyncio.client import connect

from webrl.cli.serve import TOKEN_VARIABLE as TOKEN
from webrl.netutil import free_port
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.models import READER, resolve_model
from webrl.policy.oracle import OraclePolicy
from webrl.rl.engine import DIST_VARIABLES
from webrl.runs.serve import served_observation
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks.load import load_tasks

ROOT = Path(__file__).parents[2]
SMOKE = ROOT / "sites" / "embedded" / "tasks" / "smoke.json"
ORACLE = OraclePolicy()


@pytest.fixture(scope="module")
def sites(site_servers):
    return site_servers("shopping", "shopping_admin", "miniwob", instances=2)


@pytest.fixture(scope="module")
def task_file(tmp_path_factory):
    """The smoke tasks (two of which write) and MiniWoB++ test seeds of three environments, in one file."""
    folder = tmp_path_factory.mktemp("tasks")
    miniwob = resolve_task_set("miniwob:click-button,enter-text,click-checkboxes:test", folder)[:3]
    path = folder / "tasks.json"
    path.write_text(json.dumps([t.to_config() for t in load_tasks(SMOKE) + miniwob], default=str))
    return path


def start_server(sites, task_file: Path, out: Path, *options: str, token: str | None = None):
    """`webrl serve` on the test's sites in a subprocess, once it answers /health: the process and its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")}
    env.update(WEBRL_STATE_DIR=str(sites.config.state_dir), COLUMNS="200", **({TOKEN: token} if token else {}))
    command = [sys.executable, "-m", "webrl", "serve", "--tasks", str(task_file), "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--out", str(out), "--no-screenshots", *options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}" + (f"/{token}" if token else "")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, server.communicate()
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return server, url
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise AssertionError("webrl serve did not answer /health within 60 s")


def stop_server(server: subprocess.Popen, how: signal.Signals = signal.SIGINT) -> str:
    server.send_signal(how)
    stdout, stderr = server.communicate(timeout=60)
    assert server.returncode == 0, stderr
    return stdout


def oracle_answer(task, observation: dict, history: list[str]) -> str:
    """What the oracle answers to a served observation (its text and element boxes, as webrl eval shows it)."""
    [response] = ORACLE.act([PolicyInput(task, history, served_observation(observation))], Sampling())
    return response.text


async def play(client: GenericEnvClient, task) -> tuple[float, dict]:
    """One oracle episode through the client: its final reward and the session's state after it."""
    result = await client.reset(task_id=str(task.task_id))
    history: list[str] = []
    assert result.observation["task_id"] == str(task.task_id) and "Task Instruction:" in result.observation["prompt"]
    while not result.done:
        history.append(oracle_answer(task, result.observation, history))
        result = await client.step({"text": history[-1]})
    return result.reward, await client.state()


def test_served_oracle_scores_what_webrl_eval_scores(sites, task_file, run_oracle, tmp_path):
    tasks = load_tasks(task_file)
    evaluated = run_oracle(sites, tasks)  # webrl eval's runner, before the server leases the instances
    expected = {str(t.task_id): evaluated[t.task_id]["score"] for t in tasks}
    assert set(expected.values()) == {1.0}, expected

    server, url = start_server(sites, task_file, tmp_path / "served", "--instances", "2")
    try:

        async def session(order: list) -> tuple[dict, set[int], list[list[str]]]:
            scores, instances, resets = {}, set(), []
            async with GenericEnvClient(base_url=url) as client:
                for task in order:
                    scores[str(task.task_id)], state = await play(client, task)
                    instances.add(state["instance"])
                    resets.append(state["reset_sites"])
            return scores, instances, resets

        async def both():
            return await asyncio.gather(session(tasks), session(tasks[::-1]))

        (scores_a, instances_a, resets_a), (scores_b, instances_b, resets_b) = asyncio.run(both())
    finally:
        stopped = stop_server(server)
    assert scores_a == expected and scores_b == expected
    assert len(instances_a) == 1 and len(instances_b) == 1 and instances_a != instances_b  # one instance each
    # the shop episode after the wish-list task (a write) starts on the shop reset
    assert "shopping" in resets_a[3] and "shopping" in resets_b[-2], (resets_a, resets_b)
    assert "stopped" in stopped
    records = [json.loads(line) for line in (tmp_path / "served" / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 * len(tasks) and {r["status"] for r in records} == {"done"}
    assert {(str(r["task_id"]), r["score"]) for r in records} == set(expected.items())
    summary = json.loads((tmp_path / "served" / "summary.json").read_text())
    assert summary["success_rate"]["Average"]["mean"] == 100.0 and summary["policy"] == "openenv client"


def test_bad_input_is_an_error_message_and_the_server_goes_on(sites, task_file, tmp_path):
    server, url = start_server(sites, task_file, tmp_path / "served", "--instances", "1", "--idle-timeout", "1")
    try:

        async def misuse() -> list[str]:
            errors = []
            async with GenericEnvClient(base_url=url) as client:
                for call in (
                    client.step({"text": 'do(action="Click", element="1")'}),  # before any reset
                    client.reset(task_id="no-such-task"),
                    client.reset(task="0"),
                    client.reset(seed="x"),
                ):
                    with pytest.raises(RuntimeError) as err:
                        await call
                    errors.append(str(err.value))
                result = await client.reset(seed=0)  # the session still works
                assert result.observation["task_id"] == "0"
                with pytest.raises(RuntimeError) as err:
                    await client.step({"txt": "exit()"})  # not an action
                errors.append(str(err.value))
                result = await client.step({"text": "not an action at all"})  # a counted no-op, as in webrl eval
                assert result.observation["error"].startswith("unparseable response") and not result.done
                # one instance: a second session is refused at once, in a message that says why
                async with connect(url.replace("http", "ws") + "/ws") as second:
                    errors.append(json.loads(await second.recv())["data"]["message"])
                await asyncio.sleep(7)  # idle past the timeout (checked every 5 s at least): the session is ended
                with pytest.raises(RuntimeError) as err:
                    await client.step({"text": 'exit(message="")'})
                errors.append(str(err.value))
            async with GenericEnvClient(base_url=url) as client:  # and its instance is free for the next
                assert (await client.reset(seed=1)).observation["task_id"] == "1"
            return errors

        errors = asyncio.run(misuse())
        assert httpx.get(f"{url}/health").status_code == 200
    finally:
        stop_server(server)
    assert "reset first" in errors[0]
    assert "unknown task_id 'no-such-task'" in errors[1] and "unknown argument 'task'" in errors[2]
    assert "not an integer" in errors[3] and "Invalid message (code: VALIDATION_ERROR)" in errors[4]
    assert "at capacity: 1/1 sessions" in errors[5] and "ended (idle too long)" in errors[6]


def test_bad_options_are_one_line_errors(sites, task_file, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBRL_")}
    env["WEBRL_STATE_DIR"] = str(sites.config.state_dir)
    (tmp_path / "used" / "episodes.jsonl").parent.mkdir()
    (tmp_path / "used" / "episodes.jsonl").write_text("")
    for options, says in (
        (["--host", "0.0.0.0"], "add --allow-remote"),
        (["--instances", "3"], "--instances 3: 2 site instance(s) running"),
        (["--out", str(tmp_path / "used"), "--port", str(free_port())], "episodes.jsonl exists: choose another --out"),
    ):
        command = [sys.executable, "-m", "webrl", "serve", "--tasks", str(task_file), *options]
        refused = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and says in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr


def test_remote_use_needs_the_token(sites, task_file, tmp_path):
    # on loopback here (tests stay on it), with the token every remote client needs; on compact pages, which a
    # webrl policy as a client reads as such from the observation's kind
    options = ("--allow-remote", "--observation", "compact")
    server, url = start_server(sites, task_file, tmp_path / "served", *options, token="s3cret-token")
    task = load_tasks(task_file)[1]  # a shop search, whose elements the oracle finds by their text
    bare = url.removesuffix("/s3cret-token")
    try:
        assert httpx.get(f"{bare}/health").status_code == 403
        assert httpx.get(f"{bare}/s3cret-tokenX/health").status_code == 403

        async def sessions() -> str:
            with pytest.raises(ConnectionError):
                await GenericEnvClient(base_url=bare).connect()
            async with GenericEnvClient(base_url=url) as client:
                return await play(client, task)

        reward, state = asyncio.run(sessions())
        assert reward == 1.0 and state["task_id"] == str(task.task_id)
    finally:
        stop_server(server, signal.SIGTERM)  # stopped as a service manager stops it: the run is summarised too
    assert (tmp_path / "served" / "summary.json").is_file()


@pytest.mark.slow  # builds the reader model and trains it with TRL for two steps (~1 min)
def test_the_trl_example_trains_on_served_episodes(sites, tmp_path):
    """examples/trl_grpo_miniwob.py as its header runs it: TRL's GRPOTrainer, its rollout function playing episodes
    through openenv-core's client; two steps happen, the loss is finite and the rewards are the server's scores."""
    tasks = resolve_task_set("miniwob:click-button,click-link:train", tmp_path)[:2]
    task_file = tmp_path / "tasks.json"
    task_file.write_text(json.dumps([t.to_config() for t in tasks], default=str))
    model = resolve_model(READER, tmp_path / "models")
    server, url = start_server(sites, task_file, tmp_path / "served", "--instances", "1", "--max-steps", "1")
    try:
        command = [sys.executable, str(ROOT / "examples" / "trl_grpo_miniwob.py"), "--url", url, "--model", str(model)]
        trained = subprocess.run(
            [*command, "--steps", "2", "--generations", "2", "--seeds", "2", "--out", str(tmp_path / "trl")],
            # as a user starts it: without the process-group variables an in-process training of this test run left
            # (accelerate would take LOCAL_RANK for a launch by torchrun)
            env={k: v for k, v in os.environ.items() if k not in DIST_VARIABLES},
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        stop_server(server)
    assert trained.returncode == 0, trained.stderr[-3000:]
    log = [json.loads(line) for line in (tmp_path / "trl" / "log.jsonl").read_text().splitlines()]
    steps = [entry for entry in log if "loss" in entry]
    assert [entry["step"] for entry in steps] == [1, 2] and all(math.isfinite(entry["loss"]) for entry in steps)
    records = [json.loads(line) for line in (tmp_path / "served" / "episodes.jsonl").read_text().splitlines()]
    # two groups of two episodes, one response each
    assert len(records) == 2 * 2 and {len(r["steps"]) for r in records} == {1}
    for number, entry in enumerate(steps):  # each step's mean reward is the mean score of its group's episodes
        group = records[2 * number : 2 * number + 2]
        assert entry["reward"] == pytest.approx(sum(r["score"] for r in group) / 2)
