"""The README's demo, run exactly as the README says, and its numbers kept: held-out success after each phase (all
environments, the demonstrated ones, the new ones, and each environment), with the run's wall time and the commit
it ran on, so that the README's headline table is made from this file and a fresh clone can check its digits.

    .venv/bin/webrl up --instances 2
    .venv/bin/python bench/demo.py --json bench/results/demo.json [--out runs/demo]

Without --out the run goes to a fresh temporary folder; with an --out that already holds a finished run, its numbers
are read again without running anything.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.table import Table
from stamp import add_json_option, write_result

from webrl.cli.console import make_console
from webrl.runs.summary import read_summary
from webrl.runs.train_metrics import read_metrics
from webrl.runs.train_report import eval_rate
from webrl.train.recipe import METRICS_FILE, PROGRESS_FILE

COMMAND = "webrl train --preset cpu-demo --out runs/demo"  # the README's, word for word
COLUMNS = ("Average", "demonstrated envs", "new envs")


def per_environment(run: Path, phase: int) -> dict[str, float]:
    summary = read_summary(run / "phases" / str(phase) / "eval")
    return {env: cell["success"] for env, cell in sorted(summary.section("miniwob")["environments"].items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="the run folder [default: a fresh temporary one]")
    add_json_option(parser)
    args = parser.parse_args()
    run = args.out or Path(tempfile.mkdtemp(prefix="webrl-demo-")) / "demo"
    began = time.monotonic()
    if not (run / METRICS_FILE).is_file():
        program, *rest = COMMAND.replace("runs/demo", str(run)).split()
        subprocess.run([sys.executable, "-m", program, *rest], check=True)
        minutes = round((time.monotonic() - began) / 60, 1)
    else:  # read again: the stages' own record of their time
        minutes = round(sum(json.loads((run / PROGRESS_FILE).read_text())["done"].values()) / 60, 1)
    metrics = read_metrics(run)
    phases = [
        {
            "phase": k,
            **{column: eval_rate(m, column) for column in COLUMNS},
            "environments": per_environment(run, k),
        }
        for k, m in enumerate(metrics)
    ]
    table = Table(title=f"{COMMAND}: held-out success (%) after each phase ({minutes} min)")
    for heading in ("phase", *COLUMNS):
        table.add_column(heading, justify="right")
    for row in phases:
        table.add_row(str(row["phase"]), *(f"{row[c]:.1f}" if row[c] is not None else "–" for c in COLUMNS))
    make_console().print(table)
    if args.json:
        # stamped with the run's own provenance (its last evaluation's: commit, date, machine, load), not this
        # script's, and refused if its phases ran on different commits
        stamps = [read_summary(run / "phases" / str(k) / "eval").provenance for k in range(len(metrics))]
        if len({s.commit for s in stamps}) > 1:
            raise SystemExit(f"{run}: its phases ran on several commits ({sorted({s.commit for s in stamps})})")
        result = {"bench": "demo", "run_command": COMMAND, "minutes": minutes, "phases": phases}
        write_result(args.json, {**stamps[-1].model_dump(), **result})


if __name__ == "__main__":
    main()
