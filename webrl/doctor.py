"""Environment checks behind `webrl doctor`: each says what it found and, if it failed, how to fix it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from webrl.config import Config
from webrl.netutil import port_free, port_owner

MIN_FREE_DISK_GB = 2.0


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True  # optional checks (Docker, GPU) only matter for some commands


def check_chromium() -> Check:
    try:
        from playwright.sync_api import sync_playwright

        from webrl.browser import chromium_executable, launch_chromium

        with sync_playwright() as playwright:
            executable = chromium_executable(playwright) or "Playwright's own"
            browser = launch_chromium(playwright)
            version = browser.version
            page = browser.new_page()
            page.set_content("<p>ok</p>")
            browser.close()
        return Check("Chromium (Playwright)", True, f"Chromium {version} launches headless ({executable})")
    except Exception as err:  # any failure here means the same fix
        return Check(
            "Chromium (Playwright)",
            False,
            _first_line(err),
            "apt-get install chromium  (or: playwright install --with-deps chromium)",
        )


def check_docker() -> Check:
    try:
        import docker

        client = docker.from_env(timeout=5)
        version = client.version().get("Version", "?")
        return Check("Docker engine", True, f"Docker Engine {version} reachable", required=False)
    except Exception as err:  # the SDK's own message is a nested exception repr: say what it means
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        why = "this user may not use it" if "Permission denied" in str(err) else "no engine answers"
        return Check(
            "Docker engine",
            False,
            f"not reachable at {where}: {why}",
            "needed only for --backend docker: install docker.io and start dockerd",
            required=False,
        )


def check_gpu() -> Check:
    try:
        import torch
    except ImportError:
        return Check("GPU / CUDA", False, "torch is not installed", "pip install torch", required=False)
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return Check(
            "GPU / CUDA", True, f"torch {torch.__version__}, CUDA {torch.version.cuda}: {names}", required=False
        )
    return Check(
        "GPU / CUDA",
        False,
        f"torch {torch.__version__}: no CUDA device (training and rollouts use the CPU)",
        "optional: a CUDA machine with a CUDA build of torch",
        required=False,
    )


def check_disk(state_dir: Path) -> Check:
    existing = next(p for p in [state_dir, *state_dir.parents] if p.exists())
    free_gb = shutil.disk_usage(existing).free / 2**30
    ok = free_gb >= MIN_FREE_DISK_GB
    return Check(
        "Free disk",
        ok,
        f"{free_gb:.1f} GiB free at {existing}",
        ""
        if ok
        else f"free at least {MIN_FREE_DISK_GB:.0f} GiB, or choose another --state-dir "
        "(the docker backend needs ~200 GiB)",
    )


def check_ports(config: Config, ours: bool) -> Check:
    cfg = config.sites
    ports = {f"{site}": cfg.port(site, 0) for site in cfg.ports.model_fields} | {"control": cfg.control(0)}
    busy = [
        f"{port} ({what}, {port_owner(port) or 'unknown owner'})"
        for what, port in ports.items()
        if not port_free(cfg.host, port)
    ]
    if not busy:
        return Check(
            "Free ports", True, "all site ports of instance 0 are free: " + ", ".join(map(str, ports.values()))
        )
    if ours:
        return Check("Free ports", True, "site ports are held by the running webrl sites")
    return Check(
        "Free ports",
        False,
        "in use: " + "; ".join(busy),
        "stop those processes or move the sites (config sites.ports / WEBRL_SITES__PORTS__<SITE>)",
    )


def run_checks(config: Config, sites_running: bool) -> list[Check]:
    return [
        check_chromium(),
        check_docker(),
        check_gpu(),
        check_disk(config.state_dir),
        check_ports(config, sites_running),
    ]


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"
