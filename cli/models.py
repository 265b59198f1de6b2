"""`webrl models`: the model specs, the models already prepared, and preparing one before a run needs it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from webrl.cli.console import make_console
from webrl.cli.global_options import GLOBALS
from webrl.cli.sites import compact_table
from webrl.errors import UsageError
from webrl.files import atomic_dir
from webrl.policy.models import (
    MODEL_FORMS,
    config_folder,
    folder_size,
    is_adapter,
    load_causal_lm,
    load_tokenizer,
    model_cache,
    prepared_models,
    quiet,
    resolve_model,
)

console = make_console(highlight=False, soft_wrap=True)  # a spec form stays one line
app = typer.Typer(
    help="Causal LMs for hf:/vllm: policies and training: list the specs, prepare one.", no_args_is_help=True
)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


@app.command("list")
def list_models() -> None:
    """The spec forms a command accepts as a model, then the models prepared in <state dir>/models with their
    sizes (Hub models live in the Hugging Face cache instead)."""
    cache = model_cache(GLOBALS.config())
    console.print("model specs:", markup=False)
    for form in MODEL_FORMS:
        console.print(f"  {form}", markup=False)
    prepared = prepared_models(cache)
    if not prepared:
        console.print(f"nothing prepared yet in {cache} (webrl models prepare SPEC)", markup=False)
        return
    table = compact_table("prepared", "size", "path")
    for path, size in prepared:
        table.add_row(path.name, _megabytes(size), str(path))
    console.print(table)


@app.command("prepare")
def prepare(
    spec: Annotated[
        str,
        typer.Argument(help="A model spec: tiny, smollm2-135m, ORG/NAME or a model folder (see `webrl models list`)."),
    ],
) -> None:
    """Build, convert or download a model now (once; later uses load it at once); print its folder, size and
    the time taken. Hub downloads are skipped when HF_HUB_OFFLINE=1."""
    start = time.perf_counter()
    path = resolve_model(spec, model_cache(GLOBALS.config()))
    console.print(
        f"{spec}: {path} ({_megabytes(folder_size(path))}, {time.perf_counter() - start:.1f} s)", markup=False
    )


def run_adapter(source: Path) -> Path:
    """The adapter a folder stands for: itself, a training's OUT/actor, or a `webrl train` run's last actor."""
    phases = sorted((source / "phases").glob("*/"), key=lambda p: int(p.name) if p.name.isdigit() else -1)
    updates = [p / "update" / "actor" for p in reversed(phases)]
    candidates = [source, source / "actor", *updates, source / "phases" / "0" / "sft" / "actor"]
    found = next((c for c in candidates if is_adapter(c)), None)
    if found is None:
        raise UsageError(
            f"{source}: no LoRA adapter there (adapter_config.json), nor in its actor/ or a train run's phases "
            "(a training with lora.rank above 0 writes one)"
        )
    return found


@app.command("merge")
def merge(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_OR_ADAPTER",
            help="A LoRA adapter folder, a training's output folder (its actor/), or a `webrl train` run folder "
            "(its last phase's actor).",
            exists=True,
            file_okay=False,
        ),
    ],
    out: Annotated[Path, typer.Option(help="The merged model's folder (written all or nothing).", file_okay=False)],
) -> None:
    """Merge a LoRA adapter into its base model (checked against the base's weights digest the adapter recorded):
    a plain Hugging Face folder with the tokenizer, for export, vLLM or any transformers tool."""
    import torch

    start = time.perf_counter()
    adapter = run_adapter(source)
    config = json.loads((config_folder(adapter) / "config.json").read_text())
    saved = config.get("dtype") or config.get("torch_dtype") or "float32"
    model = load_causal_lm(adapter).to(getattr(torch, saved))  # merged in fp32, written as the base is stored
    with atomic_dir(out) as tmp, quiet():
        model.save_pretrained(tmp)
        load_tokenizer(adapter).save_pretrained(tmp)
    console.print(
        f"{adapter} merged: {out} ({_megabytes(folder_size(out))}, {time.perf_counter() - start:.1f} s)", markup=False
    )


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="models")
