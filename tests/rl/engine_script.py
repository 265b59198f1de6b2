"""Train the tiny model in its own process(es), for the engine tests that need real processes: several under
the DeepSpeed launcher, or one that the test kills. Prints the training summary as JSON
after SUMMARY."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from engine_support import train_tiny  # the script's folder is on sys.path

from webrl.rl.engine import TrainSettings

SUMMARY = "training summary:"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--settings", required=True, help="TrainSettings as JSON")
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--out", type=Path, help="save_pretrained folder")
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds to sleep after each step")
    args = parser.parse_args()
    settings = TrainSettings.model_validate_json(args.settings)
    engine, summary = train_tiny(
        args.model,
        args.run_dir,
        settings,
        args.items,
        out=args.out,
        on_step=lambda step, metrics: time.sleep(args.step_delay),
    )
    if engine.rank == 0:
        print(SUMMARY, json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
