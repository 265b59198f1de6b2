"""One training (a job, webrl.rl.job_spec) run in this process or as a process of its own.

`webrl sft` and `webrl rl-update` build a job from their options and run it here; `webrl train` writes each of its
trainings as a job file in the training's folder and runs `python -m webrl.rl.job FILE`, under the DeepSpeed
launcher when the run asks for several processes, so that all of a training's memory is returned when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from webrl.errors import WebrlError
from webrl.rl.job_spec import SftJob, UpdateJob, read_job, write_job


def run_job(job: SftJob | UpdateJob) -> dict[str, Any]:
    """Train as `job` says, in this process (and its launcher's siblings); the training's summary."""
    if isinstance(job, SftJob):
        from webrl.rl.sft import run_sft

        return run_sft(job)
    from webrl.rl.update import run_update

    return run_update(job)


def spawn(job: SftJob | UpdateJob, procs: int, log: Path) -> None:
    """Run `job` as a child process (`procs` of them under the DeepSpeed launcher); its output goes to `log`."""
    from webrl.rl.engine import DIST_VARIABLES, launch_command

    path = write_job(job)
    runner = launch_command(procs) + ["--module"] if procs > 1 else [sys.executable, "-m"]
    command = [*runner, "webrl.rl.job", str(path)]
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARIABLES}  # its own process group, not ours
    with log.open("a") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        code = subprocess.run(command, env=env, stdout=sink, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-8:])
        raise WebrlError(f"training `{job.kind}` into {job.out} failed (exit {code}); the end of {log}:\n{tail}")


def main(argv: list[str]) -> None:
    [path] = argv
    run_job(read_job(Path(path)))


if __name__ == "__main__":
    main(sys.argv[1:])
