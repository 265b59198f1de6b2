"""The `webrl` command in a subprocess, as a user runs it: exit codes, messages, the up/down cycle."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from cli_support import webrl

from webrl.sites.embedded.registry import SITE_NAMES


@pytest.mark.slow  # one subprocess per command (~8 s)
def test_help_explains_every_command(cli_env):
    top = webrl(cli_env, "--help")
    assert top.returncode == 0
    for command in ("up", "down", "status", "reset", "doctor"):
        assert command in top.stdout
        sub = webrl(cli_env, command, "--help")
        assert sub.returncode == 0, sub.stderr
        assert "Usage" in sub.stdout
    assert "--instances" in webrl(cli_env, "up", "--help").stdout


@pytest.mark.slow  # starts and stops the sites in subprocesses (~14 s)
def test_up_status_reset_down_cycle(cli_env):
    try:
        first = webrl(cli_env, "up")
        assert first.returncode == 0, first.stderr
        assert "sites up" in first.stdout and "shopping_admin" in first.stdout
        shop_url = f"http://127.0.0.1:{cli_env['WEBRL_SITES__PORTS__SHOPPING']}"
        assert shop_url in first.stdout

        again = webrl(cli_env, "up")
        assert again.returncode == 0 and "already up" in again.stdout

        status = webrl(cli_env, "status")
        assert status.returncode == 0
        assert status.stdout.count("✓") == len(SITE_NAMES) and "✗" not in status.stdout
        # piped with no COLUMNS (a script reading it): every value whole, not cut at 80 columns
        piped = webrl({k: v for k, v in cli_env.items() if k != "COLUMNS"}, "status")
        admin_url = f"http://127.0.0.1:{cli_env['WEBRL_SITES__PORTS__SHOPPING_ADMIN']}/admin"
        assert "…" not in piped.stdout and admin_url in piped.stdout and "shopping_admin" in piped.stdout

        reset = webrl(cli_env, "reset", "shopping")
        assert reset.returncode == 0, reset.stderr
        assert "shopping" in reset.stdout and " ms" in reset.stdout
        took = next(line for line in webrl(cli_env, "status").stdout.splitlines() if line.startswith(" shopping "))
        assert took.rstrip().endswith(" ms")  # how long the last reset took
    finally:
        down = webrl(cli_env, "down")
    assert down.returncode == 0 and "stopped" in down.stdout
    assert "not running" in webrl(cli_env, "status").stdout


def assert_usage_error(result, *fragments):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def test_unknown_site_is_a_usage_error(cli_env):
    assert_usage_error(webrl(cli_env, "up", "--sites", "shopping,nosuchsite"), "unknown site 'nosuchsite'")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tasks", "list", "--nope"), "No such option: --nope"),
        (("train", "--algorithm", "foo"), "Invalid value for '--algorithm'"),
        (("tasks", "show", "abc"), "Invalid value for 'task_id'"),
        (
            ("eval", "--tasks", "miniwob:test", "--policy", "random:abc"),
            "unknown policy spec 'random:abc'; valid forms: oracle, random[:SEED],",
        ),
    ],
)
def test_bad_flags_are_usage_errors_in_clicks_words(cli_env, args, message):
    """A bad flag or argument exits 2 with click's message; typer raises its own copy of click's exceptions
    (it vendors click), which were reported as "unexpected NoSuchOption" with exit 1."""
    result = webrl(cli_env, *args)
    assert_usage_error(result, message)
    assert "unexpected" not in result.stderr and result.stderr.count("\n") == 1, result.stderr  # one line


@pytest.mark.slow  # `webrl sft` and `rl-update` import torch before they read their data (~5 s each)
def test_unreadable_inputs_say_where(cli_env, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("sites:\n  instances: [\n")
    assert_usage_error(
        webrl(cli_env, "--config", str(config), "status"),
        f"config file {config}: not valid YAML: expected the node content, but found '<stream end>' at line 3 column 1",
    )
    data = tmp_path / "steps.jsonl"
    data.write_bytes(bytes(range(128, 256)))
    for command in (
        ["sft", "--data", str(data), "--model", "tiny"],
        ["rl-update", "--data", str(data), "--actor", "tiny"],
    ):
        result = webrl(cli_env, *command, "--out", str(tmp_path / "o"))
        assert_usage_error(result, f"{data}: not UTF-8 text")
        assert result.stderr.count("\n") == 1, result.stderr  # the error alone: DeepSpeed is not even imported
    steps = tmp_path / "good.jsonl"
    steps.write_text('{"task_id": 1, "step": 0, "prompt": "p", "response": "r"}\n')
    result = webrl(
        cli_env, "rl-update", "--data", str(steps), "--actor", "tiny", "--critic-lr", "0", "--out", str(tmp_path / "o")
    )
    assert_usage_error(result, "--critic-lr: Input should be greater than 0, not 0.0")
    result = webrl(cli_env, "sft", "--data", str(steps), "--model", "nosuchmodel", "--out", str(tmp_path / "o"))
    assert_usage_error(result, "unknown model spec 'nosuchmodel'")
    assert "accelerator" not in result.stderr


def test_a_misspelt_placeholder_in_a_task_file_is_a_usage_error(cli_env, tmp_path):
    """It was left unsubstituted: the task scored 0 with exit 0 and no warning."""
    task = {
        "task_id": 7,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__",
        "intent": "Open the cart",
        "eval": {
            "eval_types": ["url_match"],
            "reference_url": "__SHOPPPING__/checkout/cart/",
            "url_note": "GOLD in PRED",
        },
    }
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([task]))
    result = webrl(cli_env, "eval", "--tasks", str(tasks), "--out", str(tmp_path / "run"))
    assert_usage_error(result, f"{tasks}: task 7: field 'eval.reference_url': unknown placeholder __SHOPPPING__")
    assert result.stderr.count("\n") == 1, result.stderr  # one line


def test_a_host_beyond_loopback_needs_allow_remote(cli_env):
    assert_usage_error(
        webrl(cli_env, "up", "--host", "0.0.0.0"), "--host 0.0.0.0 would let other machines reach", "--allow-remote"
    )
    assert_usage_error(webrl({**cli_env, "WEBRL_SITES__HOST": "0.0.0.0"}, "up"), "--allow-remote")


def test_port_in_use_names_port_and_owner(cli_env):
    port = int(cli_env["WEBRL_SITES__PORTS__SHOPPING"])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        result = webrl(cli_env, "up")
    assert_usage_error(result, f"port {port} (shopping instance 0)", f"pid {os.getpid()}")


@pytest.fixture
def small_disk(tmp_path):
    """A file system of its own, 64 KiB (a tmpfs): a real full disk and, remounted read-only, a real read-only one.
    The tests run as root, which file modes do not stop (a folder chmod 0555 stays writable to root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command to make a small or read-only file system with")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True, text=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here (needs root): {mounted.stderr.strip()}")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def fill(disk) -> None:
    """Write zeros to a file on `disk` until it is full."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, bytes(4096)):
            pass
    except OSError as err:
        assert err.errno == errno.ENOSPC
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("sites", "full", "path"),
    [
        ("shopping", False, "snapshots/store-v1-seed0.db"),  # SQLite's "database or disk is full" named no file
        ("homepage", True, "embedded/plan.json"),  # Python's write() error names none either
    ],
)
def test_a_full_disk_is_named(cli_env, small_disk, sites, full, path):
    """It was "unexpected OSError: [Errno 28] No space left on device" (or SQLite's OperationalError), exit 1."""
    if full:
        fill(small_disk)
    env = dict(cli_env, WEBRL_STATE_DIR=str(small_disk / "state"))
    result = webrl(env, "up", "--sites", sites)
    assert_usage_error(result, f"{small_disk / 'state' / path}: No space left on device (free some space there")
    assert result.stderr.count("\n") == 1, result.stderr
    assert list((small_disk / "state").rglob("*.tmp*")) == []  # what was half-written does not keep the disk full


def test_a_read_only_state_dir_is_named(cli_env, small_disk):
    """It was "unexpected OSError: [Errno 30] Read-only file system", exit 1, for every command writing there."""
    state = small_disk / "state"
    state.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    env = dict(cli_env, WEBRL_STATE_DIR=str(state))
    for command in (["up", "--sites", "homepage"], ["tasks", "list"]):
        result = webrl(env, *command)
        assert_usage_error(result, str(state), "Read-only file system (choose a folder on a writable file system)")
        assert result.stderr.count("\n") == 1, result.stderr


def test_reset_while_down(cli_env):
    assert_usage_error(webrl(cli_env, "reset"), "not running", "webrl up")


def test_corrupted_state_file(cli_env, tmp_path):
    server_file = tmp_path / "state" / "embedded" / "server.json"
    server_file.parent.mkdir(parents=True)
    server_file.write_text("{not json")
    assert_usage_error(webrl(cli_env, "status"), str(server_file), "corrupt")
    assert server_file.read_text() == "{not json"  # nothing is thrown away


@pytest.mark.slow  # several subprocesses (~4 s)
def test_bad_settings_name_their_source(cli_env, tmp_path):
    bad_file = tmp_path / "webrl.yaml"
    bad_file.write_text("sites:\n  instances: many\n")
    assert_usage_error(webrl(cli_env, "--config", str(bad_file), "up"), str(bad_file), "sites.instances")
    assert_usage_error(webrl(cli_env, "up", "--instances", "0"), "--instances", "greater than or equal to 1")
    high = dict(cli_env, WEBRL_SITES__PORTS__REDDIT="19999")
    assert_usage_error(webrl(high, "up", "--instances", "60"), "--instances", "beyond 65535")
    env = dict(cli_env, WEBRL_SITES__SEED="-1")
    assert_usage_error(webrl(env, "up"), "WEBRL_SITES__SEED")
    broken = tmp_path / "broken.toml"
    broken.write_text("sites = [")
    assert_usage_error(webrl(cli_env, "--config", str(broken), "status"), str(broken), "not valid TOML")


def test_debug_shows_the_traceback(cli_env):
    result = webrl(cli_env, "--debug", "reset")
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_docker_backend_without_an_engine_says_how_to_start_one(cli_env):
    env = dict(cli_env, DOCKER_HOST="unix:///nonexistent/docker.sock")
    result = webrl(env, "up", "--backend", "docker", "--images", "embedded")
    assert_usage_error(result, "the Docker engine is not reachable at unix:///nonexistent/docker.sock")
    assert "scripts/install-docker.sh" in result.stderr
    assert_usage_error(webrl(cli_env, "up", "--images", "embedded"), "--images applies to the docker backend")
    purge = webrl(env, "down", "--purge")  # refused before anything is stopped
    assert_usage_error(purge, "the Docker engine is not reachable")
    assert "stopped" not in purge.stdout and "not running" not in purge.stdout


@pytest.mark.slow  # the doctor in a subprocess (~5 s)
def test_doctor_checks_the_machine(cli_env):
    no_engine = webrl(dict(cli_env, DOCKER_HOST="unix:///nonexistent/docker.sock"), "doctor")
    assert "not reachable at unix:///nonexistent/docker.sock: no engine answers" in no_engine.stdout
    assert "DockerException" not in no_engine.stdout  # was the SDK's nested exception repr
    result = webrl(cli_env, "doctor")
    assert result.returncode == 0, result.stdout  # Chromium, disk and ports are fine on a test machine
    for check in ("Chromium (Playwright)", "Docker engine", "GPU / CUDA", "Free disk", "Free ports"):
        assert check in result.stdout
    assert "Chromium" in result.stdout and "launches headless" in result.stdout


@pytest.mark.slow  # the doctor in a subprocess (~5 s)
def test_doctor_reports_a_busy_port_with_its_fix(cli_env):
    port = int(cli_env["WEBRL_SITES__PORTS__GITLAB"])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        result = webrl(cli_env, "doctor")
    assert result.returncode == 1
    assert "✗" in result.stdout and str(port) in result.stdout and "WEBRL_SITES__PORTS__" in result.stdout


@pytest.mark.slow  # serves in a subprocess until interrupted (~5 s)
def test_foreground_serves_until_interrupted(cli_env):
    server = subprocess.Popen(
        [sys.executable, "-m", "webrl", "up", "--foreground", "--sites", "shopping"],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "✓" not in (status := webrl(cli_env, "status")).stdout:
            time.sleep(0.2)
        assert "✓" in status.stdout and "shopping" in status.stdout
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert "serving in the foreground" in out
    assert "not running" in webrl(cli_env, "status").stdout
