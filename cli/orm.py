"""`webrl orm train` and `webrl orm eval`: the outcome reward model.

The training options are webrl.rl.settings.TrainSettings's (shared with `webrl sft`), with the paper's ORM defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from webrl.cli.console import make_console
from webrl.cli.sites import compact_table
from webrl.cli.train import launchable, model_cache_dir, print_summary, with_train_settings
from webrl.orm import ORM_EPOCHS, ORM_LR
from webrl.rl.settings import COSINE_WARMUP, TrainSettings

console = make_console()
app = typer.Typer(
    help="The outcome reward model: train it on rule-labelled trajectories, and measure it against "
    "the rule evaluators.",
    no_args_is_help=True,
)

DataOption = Annotated[
    list[Path],
    typer.Option(
        metavar="PATH",
        help="Labelled trajectories: a `webrl eval` run folder (its judged episodes, label = success) "
        "or a JSONL file of {intent, responses, html, label, [task_id], [sites], [source]} records; "
        "repeat the option for several.",
    ),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option(
        help="Token limit of a prompt; a longer final page is cut from its end, never the intent, the action history "
        "or the answer header [default: 16384, capped by the model's context length]."
    ),
]
TABLE_COLUMNS = ("n", "accuracy", "precision", "recall", "f1", "majority", "tp", "fp", "fn", "tn")


@app.command("train")
@launchable
@with_train_settings(TrainSettings, lr=ORM_LR, epochs=ORM_EPOCHS, **COSINE_WARMUP)
def train(
    data: DataOption,
    model: Annotated[
        str,
        typer.Option(help="Model spec to fine-tune: tiny, smollm2-135m, ORG/NAME or a folder (`webrl models list`)."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Output folder: orm/ (Hugging Face folder for --orm), metrics.json, "
            "events.jsonl, tb/, checkpoints/. Re-run the same command to resume.",
            file_okay=False,
        ),
    ],
    max_tokens: MaxTokensOption = None,
    balance: Annotated[
        bool, typer.Option("--balance", help="Repeat random examples of the rarer label until both labels are as many.")
    ] = False,
    *,
    settings: Any = None,
) -> None:
    """Fine-tune a model into an ORM: cross-entropy of the answer token YES (success) or NO at the end of the
    prompt. Writes OUT/orm for `webrl orm eval --orm OUT/orm`. Cosine schedule with 10% warm-up (paper Table 5)."""
    from webrl.orm.train import run_orm_train
    from webrl.rl.engine import quiet_deepspeed

    quiet_deepspeed()
    summary = run_orm_train(data, model, out, settings, max_tokens, balance, model_cache_dir())
    print_summary(f"orm train → {out}", summary)


@app.command("eval")
def eval_command(
    orm: Annotated[
        str,
        typer.Option(
            help="The ORM: a model spec or folder, e.g. OUT/orm of `webrl orm train` or THUDM/webrl-orm-llama-3.1-8b."
        ),
    ],
    data: DataOption,
    out: Annotated[
        Path,
        typer.Option(
            help="The JSON report: scores overall and per site, skipped counts, and every prediction.", dir_okay=False
        ),
    ] = Path("orm-eval.json"),
    max_tokens: MaxTokensOption = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Prompts per forward pass.")] = 4,
) -> None:
    """Score labelled trajectories with the ORM (reward = p(YES) >= 0.5) and compare with the rule labels:
    accuracy, precision, recall, F1 (success is positive) and the confusion counts, overall and per site."""
    from webrl.orm.evaluate import run_orm_eval

    report = run_orm_eval(orm, data, out, max_tokens, batch_size, model_cache_dir())
    table = compact_table("", *TABLE_COLUMNS, title=f"ORM {orm} vs rule labels")
    for site, scores in report["scores"].items():
        table.add_row(
            site, *(f"{scores[c]:.3f}" if isinstance(scores[c], float) else str(scores[c]) for c in TABLE_COLUMNS)
        )
    console.print(table)
    skipped = {**report["skipped_episodes"], "too long": report["skipped_too_long"]}
    console.print(f"skipped: {', '.join(f'{k} {v}' for k, v in skipped.items() if v) or 'none'}  ·  report: {out}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="orm")
