"""The training engine that SFT and the WebRL update share: DeepSpeed ZeRO data parallelism over a loss function.

The engine knows nothing about losses. `Engine.train(items, loss_fn)` walks a seeded shuffled order of
`items` in global batches of micro_batch_size x grad_accum x world size, calls `loss_fn(model, micro_batch)`
on each rank's share, and steps the optimizer (torch AdamW, gradient clipping; a constant learning rate as in
WebRL's updates, or a cosine schedule as in its SFT).
Every optimizer step is logged to `<run dir>/events.jsonl` and TensorBoard; checkpoints (webrl.rl.checkpoint)
are written every `save_every` steps and always after the last one, and `train` resumes from the latest, so a
killed run continued ends with the same weights as an uninterrupted one.

One process works as it is (`python script.py`); several processes or machines run under the DeepSpeed
launcher (`launch_command`). On CPU the processes talk over gloo, on GPUs over NCCL.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor, nn

from webrl.errors import UsageError
from webrl.files import atomic_dir, write_atomically
from webrl.netutil import free_port
from webrl.policy.models import save_model
from webrl.rl.checkpoint import Checkpoints, load_rng, read_state, save_rng, seed_everything, write_state
from webrl.rl.settings import TrainSettings

LossFn = Callable[[nn.Module, list], tuple[Tensor, dict[str, float]]]
StepHook = Callable[[int, dict[str, float]], None]
SaveFn = Callable[[nn.Module, dict[str, Tensor], Path], None]
# Changing these between a kill and the resume does not change the result (epochs only extends the run).
RESUMABLE_CHANGES = {"save_every", "epochs"}


def deepspeed_config(settings: TrainSettings) -> dict[str, Any]:
    """The DeepSpeed config for `settings`; the optimizer is ours (a client optimizer), its learning rate set
    before every step (TrainSettings.lr_at), so DeepSpeed has no schedule."""
    zero: dict[str, Any] = {"stage": settings.zero_stage}
    if settings.offload:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        if settings.zero_stage == 3:
            zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    return {
        "train_micro_batch_size_per_gpu": settings.micro_batch_size,
        "gradient_accumulation_steps": settings.grad_accum,
        "gradient_clipping": settings.max_grad_norm,
        "zero_optimization": zero,
        "bf16": {"enabled": settings.compute_precision() == "bf16"},
        "zero_allow_untested_optimizer": True,
        "steps_per_print": 2**31 - 1,  # we log ourselves
        "wall_clock_breakdown": False,
    }


PORT_ATTEMPTS = 5
ACTOR_DIR, METRICS_FILE, EVENTS_FILE = "actor", "metrics.json", "events.jsonl"  # a training's output folder
# What the DeepSpeed launcher sets for each process it starts; a child of a process that has them would join its group
DIST_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def is_main() -> bool:
    """Rank 0 (or no process group): the process that writes files and prints."""
    return not dist.is_initialized() or dist.get_rank() == 0


def quiet_deepspeed() -> None:
    """DeepSpeed logs its configuration at INFO on every rank; we log per step ourselves."""
    from deepspeed.utils import logger

    logger.setLevel(logging.WARNING)


def own_extensions_dir() -> None:
    """DeepSpeed compiles its CPU ops (the shared-memory allreduce, loaded by every process group) on first use,
    into TORCH_EXTENSIONS_DIR: by default ~/.cache/torch_extensions, one folder per op for every Python
    environment. A build made from another environment's paths is built again (~40 s), so two environments
    taking turns (a CI checkout's .venv and the main one, beside a training run) rebuilt it each time. Unless
    TORCH_EXTENSIONS_DIR is set, a virtual environment keeps its own builds in <venv>/torch_extensions."""
    if "TORCH_EXTENSIONS_DIR" not in os.environ and sys.prefix != sys.base_prefix and os.access(sys.prefix, os.W_OK):
        os.environ["TORCH_EXTENSIONS_DIR"] = str(Path(sys.prefix) / "torch_extensions")


def init_distributed() -> None:
    """Join the process group: the launcher's when launched, else a one-process group on a free port. A free
    port can be taken between choosing it and listening on it (an outgoing connection's ephemeral port, on a
    busy machine): then another one is tried. The one-process group's address and rank stay out of os.environ: a
    child process (a `webrl` command a test or a run starts) would read it as a launcher's and join this group.
    DeepSpeed's compiled ops go to this environment's own folder (own_extensions_dir)."""
    own_extensions_dir()
    if dist.is_initialized():
        return
    import deepspeed

    quiet_deepspeed()
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if "RANK" in os.environ:
        deepspeed.init_distributed(dist_backend=backend, verbose=False)
        return
    os.environ["LOCAL_RANK"] = "0"  # DeepSpeed's engine reads it; alone it joins no group
    for attempt in range(PORT_ATTEMPTS):
        try:
            deepspeed.init_distributed(
                dist_backend=backend,
                init_method=f"tcp://127.0.0.1:{free_port()}",
                rank=0,
                world_size=1,
                auto_mpi_discovery=False,
                verbose=False,
            )
            return
        except dist.DistNetworkError:
            if attempt == PORT_ATTEMPTS - 1:
                raise


def frozen_base(model: nn.Module) -> dict[str, str] | None:
    """What a training that leaves weights frozen (an adapter's) trains on: the model's name and a digest of its
    frozen weights, which a checkpoint records and its resume checks; None when every weight trains."""
    frozen = [(name, p) for name, p in model.named_parameters() if not p.requires_grad]
    if not frozen:
        return None
    digest = hashlib.sha256()
    for name, parameter in frozen:
        digest.update(name.encode())
        digest.update(parameter.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return {"model": str(getattr(model, "name_or_path", type(model).__name__)), "digest": digest.hexdigest()}


def make_optimizer(model: nn.Module, settings: TrainSettings) -> torch.optim.Optimizer:
    """AdamW over the trainable parameters; DeepSpeed's CPU Adam (same update) when the states live on CPU."""
    params = [p for p in model.parameters() if p.requires_grad]
    kwargs = {"lr": settings.lr, "betas": settings.betas, "weight_decay": settings.weight_decay}
    if settings.offload:
        from deepspeed.ops.adam import DeepSpeedCPUAdam

        return DeepSpeedCPUAdam(params, adamw_mode=True, **kwargs)
    return torch.optim.AdamW(params, **kwargs)


def sample_order(n_items: int, seed: int, epochs: int) -> np.ndarray:
    """Item indices in training order: one seeded permutation per epoch, the same for every world size."""
    return np.concatenate([np.random.default_rng([seed, epoch]).permutation(n_items) for epoch in range(epochs)])


def rank_micro_batches(
    order: np.ndarray, step: int, settings: TrainSettings, rank: int, world_size: int
) -> list[list[int]]:
    """This rank's micro-batches for optimizer step `step` (1-based): its contiguous share of the step's
    global batch, so 1 process x grad_accum 2 and 2 processes x grad_accum 1 see the same global batches."""
    share = settings.micro_batch_size * settings.grad_accum
    start = (step - 1) * settings.global_batch(world_size) + rank * share
    mine = order[start : start + share].tolist()
    return [mine[k : k + settings.micro_batch_size] for k in range(0, share, settings.micro_batch_size)]


def launch_command(procs_per_node: int, hostfile: Path | None = None, master_port: int | None = None) -> list[str]:
    """The DeepSpeed launcher command line; append the script and its arguments. Without a hostfile it runs
    `procs_per_node` processes here (GPUs, or CPU processes over gloo); with one, that many on every host it
    lists (`host slots=N` lines; passwordless ssh, the same paths everywhere)."""
    command = [sys.executable, "-m", "deepspeed.launcher.runner", "--num_gpus", str(procs_per_node), "--no_local_rank"]
    if hostfile is None:
        command += ["--num_nodes", "1", "--master_port", str(master_port or free_port())]
    else:
        command += ["--hostfile", str(hostfile)] + (["--master_port", str(master_port)] if master_port else [])
    return command


class EventLog:
    """Rank 0's per-step metrics: one JSON line per step in events.jsonl (shared by all trainings of a run,
    told apart by `name`) and a TensorBoard run in tb/<name>. Steps logged after the checkpoint a run resumes
    from are dropped from both, so a resumed run's log reads as if it had never stopped."""

    def __init__(self, run_dir: Path, name: str, start_step: int):
        from torch.utils.tensorboard import SummaryWriter

        self.name, self.path = name, run_dir / "events.jsonl"
        run_dir.mkdir(parents=True, exist_ok=True)
        self._drop_after(start_step)
        self.sink = self.path.open("a")
        self.tb = SummaryWriter(str(run_dir / "tb" / name), purge_step=start_step + 1)

    def _drop_after(self, step: int) -> None:
        """Rewrite events.jsonl without this training's lines past `step` and lines a kill cut short."""
        if not self.path.exists():
            return
        kept = []
        for line in self.path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not (row.get("name") == self.name and row.get("step", 0) > step):
                kept.append(line + "\n")
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(kept))
        tmp.replace(self.path)

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self.sink.write(json.dumps({"name": self.name, "step": step, "time": time.time(), **metrics}) + "\n")
        self.sink.flush()
        for key, value in metrics.items():
            self.tb.add_scalar(key, value, step)
        self.tb.flush()

    def close(self) -> None:
        self.sink.close()
        self.tb.close()


@contextmanager
def progress_bar(name: str, total: int, done: int, enabled: bool) -> Iterator[Callable[[dict], None]]:
    """A rich progress bar over optimizer steps on stderr (when `enabled`); yields `advance(metrics)`."""
    if not enabled:
        yield lambda metrics: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
        console=Console(stderr=True),
    ) as progress:
        bar = progress.add_task(name, total=total, completed=done, info="")

        def advance(metrics: dict) -> None:
            progress.update(bar, advance=1, info=f"loss {metrics['loss']:.4g}")

        yield advance


class Engine:
    """A model under DeepSpeed with our optimizer, checkpoints and logs. Every process of the launch builds
    one with the same arguments; rank 0 writes the logs."""

    def __init__(self, model: nn.Module, settings: TrainSettings, run_dir: Path, name: str):
        import deepspeed

        init_distributed()
        # Subnormal floats make CPU arithmetic many times slower, and a loss read at one position per row (the
        # critic's last token) sends them back through attention: the critic's steps ran 2.5-5x slower than with
        # them flushed to zero, which changes nothing that matters (|x| < 1.2e-38).
        torch.set_flush_denormal(True)
        if settings.offload and not torch.cuda.is_available():
            raise UsageError("--offload moves optimizer states from GPU to CPU memory; there is no GPU here")
        if settings.gradient_checkpointing:
            if not hasattr(model, "gradient_checkpointing_enable"):
                raise UsageError(f"{type(model).__name__} does not support gradient checkpointing")
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.settings, self.run_dir, self.name = settings, Path(run_dir), name
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.checkpoints = Checkpoints(self.run_dir / "checkpoints" / name)
        self.base = frozen_base(model)  # before ZeRO-3 partitions the weights
        self.engine, *_ = deepspeed.initialize(
            model=model, optimizer=make_optimizer(model, settings), config=deepspeed_config(settings)
        )

    @property
    def module(self) -> nn.Module:
        """The trained model itself (under ZeRO-3 its parameters are partitioned: see `state_dict`)."""
        return self.engine.module

    def train(self, items: Sequence, loss_fn: LossFn, *, on_step: StepHook | None = None) -> dict[str, Any]:
        """Train on `items`, resuming from this training's latest checkpoint when there is one.

        `loss_fn(model, micro_batch)` returns the micro-batch's mean loss and metrics to log (floats, the same
        keys on every call; "tokens" is summed and gives tokens/s, the rest are averaged). It must run the
        forward pass by calling `model(...)` (DeepSpeed's engine: inputs go to `model.device`; the model itself
        is `model.module`).
        `on_step(step, metrics)` runs on every rank after each optimizer step is logged and saved.
        Returns the number of steps, the step it resumed from, and the last step's metrics."""
        order = sample_order(len(items), self.settings.seed, self.settings.epochs)
        total = len(order) // self.settings.global_batch(self.world_size)
        if total == 0:
            raise UsageError(
                f"{len(items)} items x {self.settings.epochs} epochs do not fill one global batch of "
                f"{self.settings.global_batch(self.world_size)} (micro batch x grad accum x processes)"
            )
        start, metrics = self._resume(len(items))
        log = EventLog(self.run_dir, self.name, start) if self.rank == 0 else None
        show = self.rank == 0 and sys.stderr.isatty()
        self.engine.train()
        try:
            with progress_bar(self.name, total, start, show) as advance:
                for step in range(start + 1, total + 1):
                    micro_batches = rank_micro_batches(order, step, self.settings, self.rank, self.world_size)
                    for group in self.engine.optimizer.param_groups:
                        group["lr"] = self.settings.lr_at(step, total)
                    metrics = self._step([[items[i] for i in micro] for micro in micro_batches], loss_fn)
                    if log:
                        log.write(step, metrics)
                    if step == total or (self.settings.save_every and step % self.settings.save_every == 0):
                        self._save(step, len(items), metrics)  # the last step always (the official code never does)
                    advance(metrics)
                    if on_step:
                        on_step(step, metrics)
        finally:
            if log:
                log.close()
        return {"steps": total, "resumed_from": start, "metrics": metrics}

    def _step(self, micro_batches: list[list], loss_fn: LossFn) -> dict[str, float]:
        """One optimizer step over this rank's micro-batches; the metrics averaged over all ranks."""
        began = time.perf_counter()
        sums: dict[str, float] = {}
        grad_norm = None
        for micro in micro_batches:
            loss, extra = loss_fn(self.engine, micro)
            self.engine.backward(loss)
            for key, value in {"loss": loss.item(), **extra}.items():
                sums[key] = sums.get(key, 0.0) + float(value)
            if self.settings.zero_stage == 0 and self.engine.is_gradient_accumulation_boundary():
                grad_norm = self._replicated_grad_norm()  # DeepSpeed does not report it without ZeRO
            self.engine.step()
        metrics = self._average(sums, len(micro_batches))
        seconds = time.perf_counter() - began
        grad_norm = self.engine.get_global_grad_norm() if grad_norm is None else grad_norm
        if grad_norm is not None:
            metrics["grad_norm"] = float(grad_norm)
        metrics["lr"] = float(self.engine.get_lr()[0])
        metrics["step_seconds"] = seconds
        if "tokens" in metrics:
            metrics["tokens_per_s"] = metrics["tokens"] / seconds
        return metrics

    def _replicated_grad_norm(self) -> float:
        """The global gradient norm when every rank holds the full, already averaged gradients (ZeRO-0)."""
        grads = [p.grad.detach().float() for p in self.engine.module.parameters() if p.grad is not None]
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()

    def _average(self, sums: dict[str, float], micro_batches: int) -> dict[str, float]:
        """Per-micro-batch means over all ranks ("tokens": the total)."""
        keys = sorted(sums)
        totals = torch.tensor([sums[k] for k in keys] + [micro_batches], dtype=torch.float64)
        if self.world_size > 1:
            dist.all_reduce(totals)
        count = totals[-1].item()
        return {k: totals[i].item() / (1 if k == "tokens" else count) for i, k in enumerate(keys)}

    def _resume_key(self, n_items: int) -> dict[str, Any]:
        """What must not change between a kill and the resume for the result to be the same."""
        # with a schedule, the number of epochs sets every step's learning rate
        kept = RESUMABLE_CHANGES - ({"epochs"} if self.settings.lr_schedule != "constant" else set())
        settings = self.settings.model_dump(mode="json", exclude=kept)
        return {
            **settings,
            "precision": self.settings.compute_precision(),
            "world_size": self.world_size,
            "items": n_items,
            "base": self.base,
        }

    def _resume(self, n_items: int) -> tuple[int, dict[str, float]]:
        """Load the latest checkpoint (model, optimizer, RNG) and return its step and metrics; seed a fresh run."""
        if self.rank == 0:
            self.checkpoints.prune()
        dist.barrier()
        latest = self.checkpoints.latest()
        if latest is None:
            seed_everything(self.settings.seed + self.rank)
            return 0, {}
        state = read_state(latest)
        key = self._resume_key(n_items)
        changed = sorted(k for k in key.keys() | state["resume_key"].keys() if key.get(k) != state["resume_key"].get(k))
        if "base" in changed and key["base"] and state["resume_key"].get("base"):
            trained_on = state["resume_key"]["base"]
            raise UsageError(
                f"{latest} trains an adapter on {trained_on['model']} (weights {trained_on['digest'][:12]}), not on "
                f"{self.base['model']} ({self.base['digest'][:12]}): resume on the same base model"
            )
        if changed:
            raise UsageError(
                f"{latest} was trained with other {', '.join(changed)}; resume with the same "
                f"settings, or train under another name or run dir"
            )
        self.engine.load_checkpoint(
            str(self.checkpoints.root),
            tag=latest.name,
            load_lr_scheduler_states=False,
            load_module_strict=self.base is None,  # the frozen weights are not in it
        )
        load_rng(latest, self.rank)
        return state["step"], state["metrics"]

    def _save(self, step: int, n_items: int, metrics: dict[str, float]) -> None:
        """Checkpoint `step` on every rank, then publish it atomically (module docstring of checkpoint)."""
        staging = self.checkpoints.staging(step)
        self.engine.save_checkpoint(
            str(self.checkpoints.root),
            tag=staging.name,
            save_latest=False,
            exclude_frozen_parameters=self.base is not None,  # an adapter's checkpoint is the adapter, not the base
        )
        save_rng(staging, self.rank)
        if self.rank == 0:
            samples = step * self.settings.global_batch(self.world_size)
            write_state(
                staging,
                {
                    "step": step,
                    "samples": samples,
                    "micro_batches_per_rank": step * self.settings.grad_accum,
                    "resume_key": self._resume_key(n_items),
                    "metrics": metrics,
                },
            )
        dist.barrier()
        if self.rank == 0:
            self.checkpoints.publish(step)
        dist.barrier()

    def state_dict(self) -> dict[str, Tensor] | None:
        """The full weights on CPU on rank 0 (None elsewhere), or of an adapter only its own. Every rank must call
        it: ZeRO-3 gathers the partitioned parameters (one layer at a time for the full weights)."""
        if self.base is not None:
            return self._trained_state()
        if self.settings.zero_stage == 3:
            return self.engine._zero3_consolidated_16bit_state_dict()
        if self.rank != 0:
            return None
        return {key: value.detach().cpu() for key, value in self.engine.module.state_dict().items()}

    def _trained_state(self) -> dict[str, Tensor] | None:
        """The parameters that train, gathered (the base's frozen weights stay where they are)."""
        trained = [(name, p) for name, p in self.engine.module.named_parameters() if p.requires_grad]
        with gathered([p for _, p in trained], self.settings.zero_stage):
            return {name: p.detach().cpu().clone() for name, p in trained} if self.rank == 0 else None

    def save_pretrained(self, path: Path, tokenizer=None, save_fn: SaveFn | None = None) -> None:
        """Write the full weights as a folder that `from_pretrained` loads directly, all-or-nothing. Every rank
        must call it; rank 0 writes. Models that are not Hugging Face models pass `save_fn(module, state_dict,
        folder)`."""
        state = self.state_dict()
        if self.rank == 0:
            with atomic_dir(Path(path)) as tmp:
                (save_fn or save_hf)(self.engine.module, state, tmp)
                if tokenizer is not None:
                    tokenizer.save_pretrained(tmp)
        dist.barrier()


def gathered(parameters: list[nn.Parameter], zero_stage: int) -> AbstractContextManager:
    """Under ZeRO-3, a context in which `parameters` are whole on every rank; else nothing to do."""
    if zero_stage != 3:
        return nullcontext()
    import deepspeed

    return deepspeed.zero.GatheredParameters(parameters)


def save_hf(module: nn.Module, state: dict[str, Tensor], folder: Path) -> None:
    """A Hugging Face model's folder (config + safetensors) from the gathered `state`; of an adapter (a PEFT
    model), the adapter's folder, naming its base."""
    save_model(module, folder, state)


def event_summary(out: Path, name: str) -> dict[str, float]:
    """One training's per-step log reduced: first/last/mean loss, mean of every other metric, and tokens/s
    over all steps (total tokens / total step time)."""
    path = out / EVENTS_FILE
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    rows = [row for row in rows if row.get("name") == name]
    if not rows:
        return {}
    summary = {"optimizer_steps": len(rows), "loss_first": rows[0]["loss"], "loss_last": rows[-1]["loss"]}
    skip = {"name", "step", "time", "lr", "tokens", "tokens_per_s", "step_seconds"}
    for key in [k for k in rows[-1] if k not in skip]:
        summary[f"{key}_mean"] = sum(row.get(key, 0.0) for row in rows) / len(rows)
    seconds = sum(row["step_seconds"] for row in rows)
    if "tokens" in rows[-1] and seconds > 0:
        summary["tokens_per_s"] = sum(row["tokens"] for row in rows) / seconds
    return summary


def write_metrics(out: Path, metrics: dict[str, Any]) -> None:
    """out/metrics.json, all-or-nothing (rank 0)."""
    if is_main():
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / METRICS_FILE, json.dumps(metrics, indent=2) + "\n")
