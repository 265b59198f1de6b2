"""The ORM on real rollouts (paper Table 3's question, at CPU scale): is an outcome reward model trained on one set
of runs' episodes a better judge of success than the majority class and a prompted model, on episodes of other runs?

Train: every rollout and evaluation episode of the --train runs (`webrl train` run folders; the rule label of each
judged episode is its success). Test: those of the --test runs, which the ORM never saw (other actors, other
seeds; a train run's folder that is a copy of a test one, such as the phase 0 that bench/compare.py's arms share
with their base, is left out of training). Three judges, through `webrl orm eval`:

- majority: always the test set's more common label;
- prompted: --judge (default `smollm2-135m`) asked the ORM's question zero-shot (p(YES) >= 0.5, the same prompt),
  on a fixed sample of --sample test episodes (a 135M model reads a page in seconds on 2 cores);
- trained: `webrl orm train` from --model (default: the first train run's SFT actor, which knows the pages), on
  every test episode and on the sample.

    .venv/bin/python bench/orm.py --train runs/compare/awr-seed0 runs/compare/filtered-bc-seed0 \
        --test runs/cpu-demo --out runs/orm [--json bench/results/orm.json]

Prints the table and writes OUT/orm/ (the trained ORM, for `webrl train --orm OUT/orm/orm --reward orm`),
OUT/trained.json, OUT/trained-sample.json and OUT/prompted-sample.json (`webrl orm eval`'s reports), and
OUT/sample.jsonl (the sampled test episodes).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

from rich.table import Table
from stamp import add_json_option, table_numbers, write_result  # bench/ is on sys.path when a bench runs

from webrl.cli.console import make_console
from webrl.orm.data import load_examples, write_examples

COLUMNS = ("n", "accuracy", "precision", "recall", "f1")


def episode_folders(run: Path) -> list[Path]:
    """The run's rollout and evaluation folders (each an eval run folder `webrl orm` reads)."""
    return sorted(
        p for p in run.glob("phases/*/*") if p.name in ("rollouts", "eval") and (p / "episodes.jsonl").is_file()
    )


def webrl(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "webrl", *args], check=True, stdout=subprocess.DEVNULL)


def data_options(folders: list[Path]) -> list[str]:
    return [option for folder in folders for option in ("--data", str(folder))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, nargs="+", required=True, help="`webrl train` runs to train on")
    parser.add_argument("--test", type=Path, nargs="+", required=True, help="`webrl train` runs to test on")
    parser.add_argument("--model", help="what the ORM is fine-tuned from [default: the first train run's SFT actor]")
    parser.add_argument("--judge", default="smollm2-135m", help="the prompted model [default: smollm2-135m]")
    parser.add_argument("--sample", type=int, default=150, help="test episodes the prompted judge reads")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs/orm"))
    add_json_option(parser)
    args = parser.parse_args()
    model = args.model or str(args.train[0] / "phases/0/sft/actor")
    test = [folder for run in args.test for folder in episode_folders(run)]
    # runs forked from one phase 0 (bench/compare.py) share its episodes: the ORM must never see a test one
    seen = {(folder / "episodes.jsonl").read_bytes() for folder in test}
    train = [
        folder
        for run in args.train
        for folder in episode_folders(run)
        if (folder / "episodes.jsonl").read_bytes() not in seen
    ]
    if not (args.out / "orm" / "orm").is_dir():
        webrl(
            "orm",
            "train",
            *data_options(train),
            "--model",
            model,
            "--out",
            str(args.out / "orm"),
            "--lr",
            str(args.lr),
            "--epochs",
            str(args.epochs),
            "--zero-stage",
            "0",
            "--micro-batch-size",
            "4",
            "--max-tokens",
            "2048",
        )
    sample = args.out / "sample.jsonl"
    if not sample.is_file():
        examples = load_examples(test).examples
        write_examples(
            sample,
            sorted(random.Random(0).sample(examples, min(args.sample, len(examples))), key=lambda e: str(e.task_id)),
        )
    trained = str(args.out / "orm" / "orm")
    reports = {}
    for name, orm, data in (
        ("trained", trained, test),
        ("trained-sample", trained, [sample]),
        ("prompted-sample", args.judge, [sample]),
    ):
        path = args.out / f"{name}.json"
        if not path.is_file():
            webrl("orm", "eval", "--orm", orm, *data_options(data), "--out", str(path), "--max-tokens", "2048")
        reports[name] = json.loads(path.read_text())["scores"]["Overall"]
    table = Table(title="success judged on held-out episodes (success = positive)")
    for column in ("judge", "episodes", *COLUMNS[1:]):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for name, label in (("trained", "every test episode"), ("trained-sample", "the sample")):
        table.add_row(
            f"majority class, {label}", str(reports[name]["n"]), f"{reports[name]['majority']:.3f}", "–", "–", "–"
        )
    for name, label in (
        ("prompted-sample", f"prompted {args.judge}, the sample"),
        ("trained-sample", "trained ORM, the sample"),
        ("trained", "trained ORM, every test episode"),
    ):
        scores = reports[name]
        table.add_row(label, *(str(scores[c]) if c == "n" else f"{scores[c]:.3f}" for c in COLUMNS))
    make_console().print(table)
    if args.json:
        write_result(args.json, table_numbers(table, scores=reports))


if __name__ == "__main__":
    main()
