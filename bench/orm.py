"""The ORM on real rollouts (paper Table 3's question, at CPU scale): is an outcome reward model trained on one set
of runs' episodes a better judge of success than the majority class and a prompted model, on episodes of other runs?

Train: every rollout and evaluation episode of the --train runs (`webrl train` run folders; the rule label of each
judged episode is its success). Test: those of the --test runs, which the ORM never saw (other actors, other
seeds). Three judges on the test episodes, through `webrl orm eval`:

- majority: always the test set's more common label;
- prompted: --judge (default `smollm2-135m`) asked the ORM's question zero-shot (p(YES) >= 0.5, the same prompt);
- trained: `webrl orm train` from --model (default: the first train run's SFT actor, which knows the pages).

    .venv/bin/python bench/orm.py --train runs/compare/awr-seed0 runs/compare/filtered-bc-seed0 \
        --test runs/cpu-demo --out runs/orm

Prints the table and writes OUT/orm/ (the trained ORM, for `webrl train --orm OUT/orm/orm --reward orm`),
OUT/trained.json and OUT/prompted.json (`webrl orm eval`'s reports).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

COLUMNS = ("n", "accuracy", "precision", "recall", "f1")


def episode_folders(run: Path) -> list[Path]:
    """The run's rollout and evaluation folders (each an eval run folder `webrl orm` reads)."""
    return sorted(p for p in run.glob("phases/*/*")
                  if p.name in ("rollouts", "eval") and (p / "episodes.jsonl").is_file())


def webrl(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "webrl", *args], check=True, stdout=subprocess.DEVNULL)


def data_options(runs: list[Path]) -> list[str]:
    return [option for run in runs for folder in episode_folders(run) for option in ("--data", str(folder))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, nargs="+", required=True, help="`webrl train` runs to train on")
    parser.add_argument("--test", type=Path, nargs="+", required=True, help="`webrl train` runs to test on")
    parser.add_argument("--model", help="what the ORM is fine-tuned from [default: the first train run's SFT actor]")
    parser.add_argument("--judge", default="smollm2-135m", help="the prompted model [default: smollm2-135m]")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs/orm"))
    args = parser.parse_args()
    model = args.model or str(args.train[0] / "phases/0/sft/actor")
    test = data_options(args.test)
    if not (args.out / "orm" / "orm").is_dir():
        webrl("orm", "train", *data_options(args.train), "--model", model, "--out", str(args.out / "orm"),
              "--lr", str(args.lr), "--epochs", str(args.epochs), "--zero-stage", "0", "--micro-batch-size", "4",
              "--max-tokens", "2048")
    reports = {}
    for name, orm in (("trained", str(args.out / "orm" / "orm")), ("prompted", args.judge)):
        path = args.out / f"{name}.json"
        if not path.is_file():
            webrl("orm", "eval", "--orm", orm, *test, "--out", str(path), "--max-tokens", "2048")
        reports[name] = json.loads(path.read_text())["scores"]["Overall"]
    table = Table(title=f"success judged on {reports['trained']['n']} held-out episodes (success = positive)")
    for column in ("judge", *COLUMNS):
        table.add_column(column, justify="left" if column == "judge" else "right")
    table.add_row("majority class", str(reports["trained"]["n"]), f"{reports['trained']['majority']:.3f}", "–", "–",
                  "–")
    for name, label in (("prompted", f"prompted {args.judge}"), ("trained", "trained ORM")):
        scores = reports[name]
        table.add_row(label, *(str(scores[c]) if c == "n" else f"{scores[c]:.3f}" for c in COLUMNS))
    Console().print(table)


if __name__ == "__main__":
    main()
