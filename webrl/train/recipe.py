"""`webrl train`: the whole WebRL run, phase after phase, with no manual step.

Read `TrainRun.run` top to bottom; each stage is one method below it.

Phase 0: the scripted solutions of the train tasks are rolled out (the oracle, in the same environment as
every other rollout) and their successful steps are the demonstrations; SFT on them gives the first actor
(unless `init` names one); the actor is evaluated. Phase k ≥ 1:

1. tasks     phase 1 samples the train split (D0); later phases generate candidates from the previous phase's
             failed tasks (the procedural evolver or an LLM), check their feasibility (with a judge), keep
             those the previous critic scores in the band (webrl.train.tasks); grpo / gigpo, which train no
             critic, keep them by their group success as they are rolled out (the group-success band).
2. rollouts  the actor samples (temperature 1) in parallel environments with per-episode resets, `group_size`
             times per task (every member from the task's start).
3. rewards   rule evaluators where the task has them, else the ORM (webrl.train.rewards); the step file.
4. update    webrl / awr: the critic, then the actor, with the filtered replay of the demonstrations and every
             earlier phase's steps (webrl.rl.update); grpo / gigpo: the actor on the phase's groups of rollouts,
             no critic, no replay; filtered-bc: SFT from the actor on the phase's successful trajectories (the 70th
             percentile and above).
5. eval      the new actor, greedy, on the evaluation tasks.

Simplifications against the paper, stated: on CPU the actor is served by transformers in this process (vLLM on
GPUs); each training's rate schedule is its settings' (the paper's update keeps a constant rate, the cpu-demo
preset decays it); a phase with nothing to learn from keeps the actor it started with.

Trainings run as child processes (webrl.rl.job: one job file each, the DeepSpeed launcher for `procs` >
1, all of a training's memory returned when it ends). Episodes run through the one episode runner (`webrl
eval`'s).

Run folder: settings.yaml (resolved), progress.json (finished stages and their seconds), phases/<k>/{tasks.json,
rollouts/, steps.jsonl, rewards.json, update/, eval/, metrics.json}, metrics.json (every phase), curve.png,
report.html. A stage's results are written before it is marked finished, and every stage can be re-run from
what is on disk: rollouts and evaluations continue their episodes file, training continues from its
checkpoints, sampling is seeded per answer. So `--resume` after a kill anywhere finishes with what an
uninterrupted run gives.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from webrl.config import Config
from webrl.errors import UsageError, WebrlError
from webrl.evaluators.judge import parse_judge_spec
from webrl.files import write_atomically
from webrl.policy.models import seeded
from webrl.rl.data import StepRecord
from webrl.rl.job import spawn
from webrl.rl.job_spec import SftJob, UpdateJob
from webrl.rl.settings import GROUP_FORMS, SftSettings, TrainSettings
from webrl.runs.eval import EvalSettings, Groups, run_policy
from webrl.runs.records import EPISODES_FILE, EpisodeRecord, read_episodes
from webrl.runs.train_metrics import METRICS_FILE, PhaseMetrics, write_metrics
from webrl.runs.train_report import write_train_report
from webrl.sites.base import SiteBackend
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks.model import Task
from webrl.train import tasks as phase_tasks
from webrl.train.metrics import all_metrics, phase_metrics
from webrl.train.rewards import (
    Rewarded,
    filtered_bc_episodes,
    reward_episodes,
    reward_summary,
    write_demos,
    write_steps,
)
from webrl.train.settings import SETTINGS_FILE, RunSettings, read_settings, write_settings

if TYPE_CHECKING:
    from webrl.policy.vllm import VLLMPolicy
    from webrl.runs.model_servers import ServerPool

PROGRESS_FILE = "progress.json"
START_PAGES_FILE = "start-pages.json"  # the observed start page of every candidate task, once per run
CANDIDATES_FILE = "candidates.json"  # a phase's candidates in the order the group-success band rolls them out
TRAININGS = ("sft", "update")  # the stages that train, each into phases/<k>/<stage>/
Training = TypeVar("Training", bound=TrainSettings)


class Progress(Protocol):
    """What the loop tells a live view."""

    def stage(self, phase: int, name: str) -> None: ...

    def episodes(self, total: int) -> None: ...  # the stage under way runs `total` episodes

    def episode(self, success: bool | None) -> None: ...

    def phase_done(self, metrics: PhaseMetrics) -> None: ...


class Silent:
    def stage(self, phase: int, name: str) -> None:
        pass

    def episodes(self, total: int) -> None:
        pass

    def episode(self, success: bool | None) -> None:
        pass

    def phase_done(self, metrics: PhaseMetrics) -> None:
        pass


class TrainRun:
    """One run folder and the stages that fill it (module docstring)."""

    def __init__(
        self, settings: RunSettings, out: Path, config: Config, backend: SiteBackend, progress: Progress | None = None
    ):
        self.settings, self.out, self.config, self.backend = settings, Path(out), config, backend
        self.progress = progress or Silent()
        self.models_dir = Path(config.state_dir) / "models"
        path = self.out / PROGRESS_FILE
        self.done: dict[str, float] = json.loads(path.read_text())["done"] if path.exists() else {}
        self._task_sets: dict[str, list[Task]] = {}
        # the rollout server kept across stages (keep_rollout_server): a vLLM policy here, a pool on Ray
        self._server: VLLMPolicy | ServerPool | None = None

    @classmethod
    def start(
        cls,
        settings: RunSettings,
        out: Path,
        config: Config,
        backend: SiteBackend,
        progress: Progress | None = None,
        resume: bool = False,
    ) -> TrainRun:
        out = Path(out)
        if resume:
            settings = read_settings(out)
        elif (out / SETTINGS_FILE).exists():
            raise UsageError(
                f"{out} holds a run already: continue it with --resume --out {out}, or choose another --out"
            )
        else:
            out.mkdir(parents=True, exist_ok=True)
            write_settings(out, settings)
        return cls(settings, out, config, backend, progress)

    # ---- the recipe --------------------------------------------------------------------------------------

    def run(self) -> list[PhaseMetrics]:
        """Every stage not finished yet; the metrics of every phase."""
        try:
            return self._run()
        finally:
            if self._server is not None:
                self._server.close()

    def _run(self) -> list[PhaseMetrics]:
        if self.settings.nodes > 1 and self.config.cluster.executor != "ray":
            raise UsageError(f"--nodes {self.settings.nodes}: a training across machines needs --executor ray")
        if self.config.cluster.executor == "local" and self.backend.running() is None:  # on Ray: the workers' own
            raise UsageError(
                "the sites are not running; start them with `webrl up"
                + (f" --instances {self.settings.parallel}`" if self.settings.parallel > 1 else "`")
            )
        if self.settings.init is None or self.settings.algorithm in ("webrl", "awr"):  # SFT data, replay buffer
            self._stage(0, "demos", self.demos)
        if self.settings.init is None:
            self._stage(0, "sft", self.sft)
        self._stage(0, "eval", self.evaluate_phase, 0)
        self._finish_phase(0)
        for k in range(1, self.phases + 1):
            self._stage(k, "tasks", self.make_tasks, k)
            self._stage(k, "rollouts", self.rollouts, k)
            self._stage(k, "rewards", self.rewards, k)
            self._stage(k, "update", self.update, k)
            self._stage(k, "eval", self.evaluate_phase, k)
            self._finish_phase(k)
        return all_metrics(self.out)

    def demos(self) -> None:
        """The scripted solutions of the demonstration tasks, rolled out; successful steps → demos.jsonl."""
        train = self.demo_tasks()
        self.progress.episodes(len(train))
        write_demos(
            train,
            self.backend,
            self.phase_dir(0) / "demos",
            self.phase_dir(0) / "demos.jsonl",
            backend_name=self.config.sites.backend,
            parallel=self.settings.parallel,
            judge=self.settings.judge,
            mode=self.settings.mode,
            observation=self.settings.observation,
            on_episode=self._on_episode,
        )

    def sft(self) -> None:
        demos = self.phase_dir(0) / "demos.jsonl"
        if not demos.read_text().strip():
            raise WebrlError(
                f"{demos}: no demonstrations (no scripted solution succeeded); see "
                f"{self.phase_dir(0) / 'demos' / 'report.html'}"
            )
        self.train(
            SftJob(
                data=demos,
                model=seeded(self.settings.model, self.settings.seed),  # reader: the run's seed draws its weights
                out=self.phase_dir(0) / "sft",
                settings=self.training(self.settings.sft),
                max_tokens=self.settings.max_tokens,
                models_dir=self.models_dir,
            ),
            self.phase_dir(0) / "sft.log",
        )

    def train(self, job: SftJob | UpdateJob, log: Path) -> None:
        """One training, in processes of its own: here (the DeepSpeed launcher for procs > 1), or as nodes × procs
        ranks placed by Ray (`--executor ray`)."""
        if self.config.cluster.executor == "ray":
            from webrl.rl.ranks import train_on_ray

            train_on_ray(job, self.settings.nodes, self.settings.procs, self.config.cluster, log)
        else:
            spawn(job, self.settings.procs, log)

    def make_tasks(self, k: int) -> None:
        """Phase k's tasks (module docstring, stage 1); nothing new to try: the train split again, so the phase
        still learns."""
        settings = self.settings
        rng = random.Random(f"tasks:{settings.seed}:{k}")
        train = self.train_tasks()
        kept, report = [], {"source": "train split"}
        if k > 1:
            failed = [item.task_id for item in self._rewarded(k - 1) if item.reward is not None and item.reward < 0.5]
            by_id = {t.task_id: t for t in self.phase_tasks(k - 1)}
            failed_tasks = list({i: by_id[i] for i in failed if i in by_id}.values())
            earlier = [t for j in range(1, k) for t in self.phase_tasks(j)]
            known, trained = self.task_set(settings.family_set) + earlier, self.demo_tasks() + earlier
            candidates, report = phase_tasks.generate(
                settings,
                k,
                failed_tasks,
                known,
                trained,
                Path(self.config.state_dir),
                self.sites_seed(),
                self.models_dir,
            )
            candidates, report["feasibility"] = phase_tasks.feasible(settings, candidates)
            if settings.critic_filter and settings.algorithm in GROUP_FORMS:
                kept = rng.sample(candidates, len(candidates))  # the order the group-success band rolls them out in
                write_atomically(self.phase_dir(k) / CANDIDATES_FILE, json.dumps([t.to_config() for t in kept]))
                report["critic"] = {"applied": False, "chosen": "by the group-success band, as they are rolled out"}
            elif settings.critic_filter:
                kept, report["critic"] = phase_tasks.in_critic_band(
                    settings, candidates, self.critic(k - 1), self.backend, self.out / START_PAGES_FILE
                )
            else:
                kept = rng.sample(candidates, min(settings.tasks_per_phase, len(candidates)))
                report["critic"] = {"applied": False, "chosen": "at random (critic_filter off)"}
            if not kept:
                report["fallback"] = "no new tasks: sampled the train split"
        if not kept:
            kept = sorted(rng.sample(train, min(settings.tasks_per_phase, len(train))), key=lambda t: t.task_id)
        report["kept"] = len(kept)
        write_atomically(self.phase_dir(k) / "tasks.json", json.dumps([t.to_config() for t in kept]))
        write_atomically(self.phase_dir(k) / "tasks-report.json", json.dumps(report, indent=1, default=str))

    def rollouts(self, k: int) -> None:
        """The actor's rollouts of the phase's tasks. Under the group-success band, of its candidates, round after
        round (webrl.train.tasks), each round a run of its own in rollouts/round-N, their episodes then gathered in
        rollouts/ and the phase's tasks then those rolled out; a resume replays the rounds from the start (a
        finished round's episodes are on disk), so each round is what it was."""
        rollouts = self.phase_dir(k) / "rollouts"
        candidates_file = self.phase_dir(k) / CANDIDATES_FILE
        if not candidates_file.exists():
            self._rollouts(k, self.phase_tasks(k), rollouts)
            return
        candidates = [Task.model_validate(c) for c in json.loads(candidates_file.read_text())]
        rolled: list[Task] = []
        rounds: list[Path] = []
        while batch := phase_tasks.group_band_round(
            candidates, self._group_success_rates(rounds), self.settings.tasks_per_phase
        ):
            rounds.append(rollouts / f"round-{len(rounds) + 1}")
            self._rollouts(k, batch, rounds[-1])
            rolled += batch
        records = [record for folder in rounds for record in read_episodes(folder)]
        write_atomically(rollouts / EPISODES_FILE, "".join(record.to_line() for record in records))
        write_atomically(self.phase_dir(k) / "tasks.json", json.dumps([t.to_config() for t in rolled]))
        inside = sum(phase_tasks.in_group_band(rate) for rate in self._group_success_rates(rounds).values())
        report_file = self.phase_dir(k) / "tasks-report.json"
        report = json.loads(report_file.read_text())
        report["group_band"] = {"candidates": len(candidates), "rolled": len(rolled), "in_band": inside}
        write_atomically(report_file, json.dumps(report, indent=1, default=str))

    def _rollouts(self, k: int, tasks: list[Task], out: Path) -> None:
        self._episodes(
            out,
            tasks,
            self.actor(k - 1),
            temperature=self.settings.temperature,
            seed=self.settings.seed * 1000 + k,
            repeats=self.settings.group_size,
        )

    @staticmethod
    def _group_success_rates(runs: list[Path]) -> dict[str, float]:
        """Each group's success rate in these rollout runs (task id -> rate)."""
        outcomes: dict[str, list[bool]] = {}
        for record in (record for folder in runs for record in read_episodes(folder)):
            outcomes.setdefault(str(record.task_id), []).append(record.success is True)
        return {task_id: sum(won) / len(won) for task_id, won in outcomes.items()}

    def rewards(self, k: int) -> None:
        """Each rollout's reward (webrl.train.rewards), the phase's step file and the reward summary."""
        orm = None
        tasks = {t.task_id: t for t in self.phase_tasks(k)}
        if self.settings.orm is not None:
            from webrl.orm.model import OutcomeRewardModel

            orm = OutcomeRewardModel.load(self.settings.orm, self.models_dir, self.settings.max_tokens)
        records = read_episodes(self.phase_dir(k) / "rollouts")
        rewarded = reward_episodes(records, tasks, orm, orm_first=self.settings.reward == "orm")
        del orm
        write_steps(self.phase_dir(k) / "steps.jsonl", records, rewarded)
        write_atomically(self.phase_dir(k) / "rewarded.json", json.dumps([dataclasses.asdict(r) for r in rewarded]))
        write_atomically(self.phase_dir(k) / "rewards.json", json.dumps(reward_summary(rewarded), indent=1))

    def update(self, k: int) -> None:
        """The phase's training (module docstring, stage 4); nothing to learn from leaves the actor as it was."""
        settings, phase = self.settings, self.phase_dir(k)
        steps = phase / "steps.jsonl"
        common = {
            "model": self.actor(k - 1),
            "out": phase / "update",
            "max_tokens": settings.max_tokens,
            "models_dir": self.models_dir,
        }
        job: SftJob | UpdateJob
        if settings.algorithm == "filtered-bc":
            keep = filtered_bc_episodes(self._rewarded(k))
            lines = [
                line
                for line in steps.read_text().splitlines()
                if line and StepRecord.model_validate_json(line).episode_name in keep
            ]
            job = SftJob(
                data=phase / "filtered-bc.jsonl",
                **common,
                settings=SftSettings(**self.training(settings.update).train_settings().model_dump()),
            )
            write_atomically(job.data, "".join(line + "\n" for line in lines))
        else:
            update = self.training(settings.update)  # awr, grpo, gigpo: the objective of that name (RunSettings)
            replay = [self.phase_dir(0) / "demos.jsonl", *(self.phase_dir(j) / "steps.jsonl" for j in range(1, k))]
            with_critic = settings.algorithm in ("webrl", "awr")  # grpo and gigpo: neither critic nor replay
            job = UpdateJob(
                data=steps,
                **common,
                settings=update,
                critic=self.critic(k - 1) if with_critic else None,
                replay=[p for p in replay if with_critic and p.exists() and p.read_text().strip()],
            )
        if job.data.read_text().strip():  # the phase's steps, or Filtered BC's selection of them
            self.train(job, phase / "update.log")

    def evaluate_phase(self, k: int) -> None:
        self._episodes(
            self.phase_dir(k) / "eval",
            self.eval_tasks(k),
            self.actor(k),
            temperature=0.0,
            seed=None,
            groups=self.groups,
        )

    def groups(self, records: list[EpisodeRecord]) -> dict[str, dict]:
        """An evaluation's episodes in the task family's groups (MiniWoB++: the environments phase 0 demonstrated
        and the others), for its summary and the phase's metrics."""
        return self.settings.task_family.groups(records, self.demo_tasks())

    def training(self, settings: Training) -> Training:
        """A training's settings with the run's seed (its data order, a fresh critic's heads): runs that differ
        only in --seed differ in their trainings too."""
        return settings.model_copy(update={"seed": self.settings.seed})

    # ---- models of each phase ----------------------------------------------------------------------------

    @property
    def phases(self) -> int:
        return 0 if self.settings.algorithm == "sft" else self.settings.phases

    def actor(self, k: int) -> str:
        """The actor after phase k: its update's, else the one before (a phase with nothing to learn from)."""
        if k == 0:
            return self.settings.init or str(self.phase_dir(0) / "sft" / "actor")
        updated = self.phase_dir(k) / "update" / "actor"
        return str(updated) if updated.is_dir() else self.actor(k - 1)

    def critic(self, k: int) -> Path | None:
        """The critic after phase k (webrl and awr train one), else the latest before it, else None."""
        for j in range(k, 0, -1):
            path = self.phase_dir(j) / "update" / "critic"
            if path.is_dir():
                return path
        return None

    # ---- tasks -------------------------------------------------------------------------------------------

    def task_set(self, name: str) -> list[Task]:
        """A named task set (the embedded suite of the running sites' data), resolved once per run."""
        if name not in self._task_sets:
            self._task_sets[name] = resolve_task_set(name, self.config.state_dir, self.sites_seed())
        return self._task_sets[name]

    def sites_seed(self) -> int:
        """The embedded sites' data seed: the running sites', else the configuration's (the Ray workers start
        theirs with it)."""
        plan = self.backend.running()
        return plan.seed if plan else self.config.sites.seed

    def demo_tasks(self) -> list[Task]:
        """Phase 0's demonstration tasks: those of --demo-tasks (default the train tasks) with a scripted solution,
        a fixed sample of --sft-tasks of them where given."""
        name = self.settings.demo_tasks or self.settings.train_tasks
        tasks = [t for t in self.task_set(name) if t.cheat]
        if self.settings.sft_tasks is not None and self.settings.sft_tasks < len(tasks):
            rng = random.Random(f"sft:{self.settings.seed}")
            tasks = sorted(rng.sample(tasks, self.settings.sft_tasks), key=lambda t: t.task_id)
        return tasks

    def train_tasks(self) -> list[Task]:
        return [t for t in self.task_set(self.settings.family_set) if t.split == "train"]

    def eval_tasks(self, k: int) -> list[Task]:
        """Phase k's evaluation tasks: the final set at both ends of the run, where one is named."""
        ends = k in (0, self.settings.phases) and self.settings.final_eval_tasks
        tasks = self.task_set(self.settings.final_eval_tasks if ends else self.settings.eval_tasks)
        if self.settings.eval_limit and self.settings.eval_limit < len(tasks):
            # a fixed sample, spread over the sites; not the run's seed: runs of other seeds are measured alike
            rng = random.Random("eval")
            tasks = sorted(rng.sample(tasks, self.settings.eval_limit), key=lambda t: str(t.task_id))
        return tasks

    def phase_tasks(self, k: int) -> list[Task]:
        path = self.phase_dir(k) / "tasks.json"
        return [Task.model_validate(c) for c in json.loads(path.read_text())] if path.exists() else []

    def _rewarded(self, k: int) -> list[Rewarded]:
        return [Rewarded(**r) for r in json.loads((self.phase_dir(k) / "rewarded.json").read_text())]

    # ---- running stages, episodes and trainings ----------------------------------------------------------

    def _stage(self, phase: int, name: str, work: Callable[..., Any], *args: Any) -> None:
        key = f"{phase}:{name}"
        if key in self.done:
            return
        self.progress.stage(phase, name)
        began = time.perf_counter()
        work(*args)
        self.done[key] = round(time.perf_counter() - began, 1)
        write_atomically(self.out / PROGRESS_FILE, json.dumps({"done": self.done}, indent=1))
        if name in TRAININGS and not self.settings.keep_checkpoints:
            # Only after the stage is marked done: a training killed before that resumes from them.
            shutil.rmtree(self.phase_dir(phase) / name / "checkpoints", ignore_errors=True)

    def phase_dir(self, k: int) -> Path:
        path = self.out / "phases" / str(k)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _episodes(
        self,
        out: Path,
        tasks: Sequence[Task],
        actor: str,
        *,
        temperature: float,
        seed: int | None,
        groups: Groups | None = None,
        repeats: int = 1,
    ) -> None:
        """The actor's episodes over `tasks` into `out` (continuing what is there), `repeats` of each, through
        `webrl eval`'s runner: every episode starts from its task's start (its dirty sites reset first)."""
        settings = EvalSettings(
            tasks=str(out),
            policy=f"{self.settings.rollout_policy}:{actor}",
            backend=self.config.sites.backend,
            parallel=self.settings.parallel,
            max_steps=self.settings.max_steps,
            mode=self.settings.mode,
            judge=self.settings.judge,
            observation=self.settings.observation,
            temperature=temperature,
            max_tokens=self.settings.max_new_tokens,
            seed=seed,
            repeats=repeats,
            out=out,
            resume=True,
            # an hf: actor sees its prompts cut where its trainings cut them
            context=self.settings.max_tokens,
            screenshots=False,
        )
        self.progress.episodes(len(tasks) * repeats)
        run_policy(
            settings,
            list(tasks),
            self.backend,
            self.models_dir,
            parse_judge_spec(self.settings.judge),
            self._on_episode,
            groups,
            kept=self._kept_server(actor),
        )

    def _kept_server(self, actor: str) -> VLLMPolicy | ServerPool | None:
        """With keep_rollout_server: the run's one vLLM server, serving `actor` (a LoRA adapter on the base it
        serves is switched in place; other weights restart it); on Ray, the run's pool of servers, which the
        executor has load `actor` on every server before the stage's first episode."""
        if not self.settings.keep_rollout_server:
            return None
        if self.config.cluster.executor == "ray":
            from webrl.runs.model_servers import ServerPool

            self._server = self._server or ServerPool(self.config.cluster, self.models_dir)
            return self._server
        from webrl.policy.models import resolve_model
        from webrl.policy.vllm import VLLMPolicy

        weights = resolve_model(actor, self.models_dir)
        if self._server is None:
            self._server = VLLMPolicy(str(weights), self.models_dir)
        self._server.load(weights)
        return self._server

    def _on_episode(self, record: EpisodeRecord) -> None:
        self.progress.episode(record.success)

    def _finish_phase(self, k: int) -> None:
        seconds = {key.partition(":")[2]: s for key, s in self.done.items() if key.startswith(f"{k}:")}
        metrics = phase_metrics(
            self.phase_dir(k),
            k,
            self.settings.algorithm,
            self.actor(k),
            seconds,
            self.groups,
        )
        write_metrics(self.phase_dir(k) / METRICS_FILE, metrics)
        every = all_metrics(self.out)
        write_metrics(self.out / METRICS_FILE, every)
        write_train_report(self.out, self.settings, every)
        self.progress.phase_done(metrics)
