"""The settings of a `webrl train` run (RunSettings), its presets, and the file that holds them in the run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, model_validator

from webrl.errors import UsageError
from webrl.files import write_atomically
from webrl.rl.settings import COSINE_WARMUP, REPLAY_CONFIDENCE, TrainSettings, check_replay_confidence

SETTINGS_FILE = "settings.yaml"


Algorithm = Literal["webrl", "filtered-bc", "awr", "sft"]


class RunSettings(BaseModel):
    """A `webrl train` run: where it starts, how many phases, and how each phase is made. The field
    descriptions are the CLI's help; presets (PRESETS) are partial settings applied first."""

    model_config = {"extra": "forbid"}

    algorithm: Algorithm = Field("webrl", description="webrl (the curriculum, critic and KL-constrained actor "
                                 "update), filtered-bc (imitate the phase's successful rollouts, the 70th "
                                 "percentile and above), awr (advantage-weighted regression with the critic), or "
                                 "sft (phase 0 only).")
    model: str = Field("tiny", description="Model spec phase 0 fine-tunes on the suite's demonstrations (tiny, "
                       "smollm2-135m, ORG/NAME, a folder).")
    init: str | None = Field(None, description="Start from this model instead: no SFT (the demonstrations are "
                             "still the phase-1 replay buffer).")
    phases: int = Field(8, ge=0, description="RL phases after phase 0 (the paper: 8).")
    train_tasks: str = Field("embedded:train", description="The train tasks: their scripted solutions are phase "
                             "0's demonstrations and phase 1 samples them; later phases generate tasks of the same "
                             "family from the failures. embedded:train (the suite), or miniwob[:ENV,...]:train "
                             "(new seeds of the failed environments, and environments not met yet).")
    demo_tasks: str | None = Field(None, description="Task set whose scripted solutions are phase 0's "
                                   "demonstrations [default: the train tasks]; on MiniWoB++ a subset of the train "
                                   "environments (miniwob:ENV,...:train), so that later phases meet environments the "
                                   "SFT never saw.")
    sft_tasks: int | None = Field(None, ge=1, description="Demonstration tasks whose scripted solutions are the SFT "
                                  "demonstrations [default: all].")
    tasks_per_phase: int = Field(500, ge=1, description="Tasks rolled out per phase (the paper: 500). Phase 1 "
                                 "samples the train split; later phases generate them from the failures.")
    candidate_factor: float = Field(2.0, ge=1.0, description="Generate this many times --tasks-per-phase "
                                    "candidates, for the critic filter to choose from.")
    generator: str = Field("evolver", description="Task generator: evolver (new verifiable tasks of the train "
                           "tasks' family), or an LLM for the embedded suite (openai:MODEL@URL, hf:SPEC, vllm:SPEC; "
                           "its tasks are scored by --orm).")
    orm: str | None = Field(None, description="Outcome reward model spec (e.g. a `webrl orm train` OUT/orm, or "
                            "THUDM/webrl-orm-llama-3.1-8b): rewards tasks without rule evaluators and is recorded "
                            "beside the rules' reward.")
    reward: Literal["rules", "orm"] = Field("rules", description="Whose verdict is each rollout's reward: rules (the "
                                            "task's evaluators; the ORM only where a task has none), or orm (the "
                                            "--orm model's everywhere, the rules' recorded beside it).")
    judge: str = Field("none", description="LLM judge (openai:MODEL@URL) for fuzzy/N/A answers and the "
                       "feasibility filter.")
    critic_band: tuple[float, float] = Field((0.05, 0.75), description="Keep generated tasks whose critic value "
                                             "on the start page lies in this band.")
    critic_filter: bool = Field(True, description="Choose each phase's tasks by the critic band; off (an "
                                "ablation): a random sample of the candidates.")
    critic_rule: Literal["value", "either"] = Field("value", description="value: V = min of the two heads in "
                                                    "the band; either: the official test (either head).")
    rollout_policy: Literal["hf", "vllm"] = Field("hf", description="Who serves the actor during rollouts and "
                                                  "evaluation: hf (transformers in this process) or vllm.")
    parallel: int = Field(1, ge=1, description="Episodes at once (needs `webrl up --instances N`).")
    max_steps: int = Field(30, ge=1, description="Step limit per episode (WebRL: 30).")
    temperature: float = Field(1.0, ge=0.0, description="Rollout sampling temperature (the paper: 1).")
    max_new_tokens: int = Field(2048, ge=1, description="Token limit of each answer in rollouts and evaluations "
                                "(WebRL: 2048).")
    eval_tasks: str = Field("embedded:test", description="Task set each phase is evaluated on (greedy).")
    eval_limit: int | None = Field(None, ge=1, description="Evaluate on a fixed sample of N of them only.")
    replay: bool = Field(True, description="webrl / awr: train on the filtered replay of the demonstrations and "
                         "earlier phases' successful steps beside the phase's own; off (an ablation): its own only.")
    replay_confidence: tuple[float, float] = Field(REPLAY_CONFIDENCE, description="Replay an earlier successful "
                                                   "step when the actor's confidence in it, exp(mean token "
                                                   "log-prob), lies in (LOW, HIGH] (the paper's best: 0.5 0.95; a "
                                                   "HIGH of 1 also replays what the actor already does surely).")
    objective: Literal["official", "paper"] = Field("official", description="The WebRL objective's form.")
    beta: float = Field(1.0, ge=0.0, description="The paper objective's KL weight.")
    sft: TrainSettings = Field(default_factory=lambda: TrainSettings(lr=1e-5, **COSINE_WARMUP), description="Phase 0's SFT.")
    sft_page_loss: float = Field(0.0, ge=0.0, description="Phase 0's SFT also trains a language-model loss on the "
                                 "prompt's tokens, this weight beside the answer's (0: the answer only, as WebRL; a "
                                 "from-scratch model such as tiny needs it to read the page, README \"Training\").")
    update: TrainSettings = Field(default_factory=TrainSettings, description="Every phase's critic and actor "
                                  "update.")
    critic_lr: float | None = Field(None, gt=0, description="Learning rate of every phase's critic [default: the "
                                    "update's, as in the official code].")
    critic_replay: bool = Field(True, description="webrl / awr: the critic trains on the replayed steps too, as in "
                                "the official code; off: on the phase's own rollouts only, so that its values (and "
                                "the next phase's task band) say where this actor succeeds.")
    max_tokens: int | None = Field(None, ge=2, description="Token limit of prompt + response in training.")
    procs: int = Field(1, ge=1, description="Training processes per machine (DeepSpeed launcher).")
    seed: int = Field(0, description="Seeds task sampling, generation, rollouts and the trainings (their data order "
                      "and a fresh critic's heads; it replaces sft.seed and update.seed).")
    keep_checkpoints: bool = Field(False, description="Keep every finished training's resumable checkpoints "
                                   "(weights and optimizer states: several times the model's size). By default "
                                   "only the exported actor and critic stay, which is all the next phase needs.")

    @model_validator(mode="after")
    def _train_tasks_of_a_family(self) -> RunSettings:
        miniwob = self.train_tasks.startswith("miniwob")
        if self.train_tasks != "embedded:train" and not (miniwob and self.train_tasks.endswith(":train")):
            raise ValueError("the train tasks are embedded:train or miniwob[:ENV,...]:train (a train split: the "
                             "test seeds stay held out)")
        if self.demo_tasks is not None and not (self.demo_tasks.endswith(":train")
                                                and self.demo_tasks.startswith("miniwob" if miniwob else "embedded")):
            raise ValueError("the demonstration tasks are a train split of the train tasks' family "
                             "(miniwob[:ENV,...]:train, or embedded:train)")
        try:
            check_replay_confidence(self.replay_confidence)
        except ValueError as err:
            raise ValueError(f"replay_confidence: {err}") from None
        if self.reward == "orm" and self.orm is None:
            raise ValueError("reward orm needs an --orm model")
        if miniwob and self.generator != "evolver":
            raise ValueError("MiniWoB++ tasks are generated by the evolver (new seeds); an LLM generator writes "
                             "embedded tasks")
        return self

    @property
    def family(self) -> str:
        """The train tasks' family as a task set name: train and test, what generated tasks must not repeat."""
        return self.train_tasks.removesuffix(":train")


_SMALL_TRAIN = {"zero_stage": 0, "micro_batch_size": 4}
# The CPU demo's MiniWoB++ environments: SFT on the demonstrations of 14 (one or two clicks or a typed text: the
# learnability probe in README "Training"); the curriculum and the evaluation also cover 6 more of the same kinds
# that the SFT never sees. 10 demonstrated seeds per environment: `tiny` fits 50 no better (README "Training").
DEMO_ENVIRONMENTS = ("click-test,click-test-2,click-button,click-link,click-dialog,click-tab,focus-text,focus-text-2,"
                     "click-widget,click-option,click-checkboxes,enter-text,enter-password,login-user")
NEW_ENVIRONMENTS = ("click-test-transfer,click-dialog-2,click-tab-2-easy,unicode-test,click-button-sequence,"
                    "click-collapsible-nodelay")
PRESETS: dict[str, dict] = {
    # the test suite's: two phases on `tiny` in a couple of minutes
    "ci": {"model": "tiny", "phases": 2, "sft_tasks": 6, "tasks_per_phase": 4, "max_steps": 3, "eval_limit": 4,
           "max_new_tokens": 48, "max_tokens": 1024, "sft": {**_SMALL_TRAIN, "lr": 1e-3, "epochs": 2},
           "update": {**_SMALL_TRAIN, "lr": 1e-4}},
    # the README's demo: WebRL learning MiniWoB++ on 2 CPU cores, evaluated on every held-out test seed
    "cpu-demo": {"model": "tiny", "phases": 3,
                 "train_tasks": f"miniwob:{DEMO_ENVIRONMENTS},{NEW_ENVIRONMENTS}:train",
                 "demo_tasks": f"miniwob:{DEMO_ENVIRONMENTS}:train", "sft_tasks": 140,
                 "eval_tasks": f"miniwob:{DEMO_ENVIRONMENTS},{NEW_ENVIRONMENTS}:test", "tasks_per_phase": 120,
                 "max_steps": 6, "max_new_tokens": 48, "parallel": 2, "max_tokens": 2048,
                 "sft": {**_SMALL_TRAIN, "lr": 3e-3, "epochs": 8, **COSINE_WARMUP},
                 # 1000x the paper's rate, to move `tiny` in a few hundred steps; decayed so that the phase ends
                 # on settled weights rather than wherever the last noisy steps left them (README "Training")
                 "update": {**_SMALL_TRAIN, "lr": 1e-3, "epochs": 2, **COSINE_WARMUP},
                 # a critic that ranks tasks by this actor's own outcomes, so the band drops what it never solves;
                 # and the replay of what it already does surely, which `tiny` otherwise forgets (README "Training")
                 "critic_lr": 1e-4, "critic_replay": False, "replay_confidence": (0.5, 1.0)},
    # the whole loop on the embedded WebArena-Lite suite (success stays near 0 for `tiny`: see README "Training")
    "embedded-demo": {"model": "tiny", "phases": 2, "sft_tasks": 100, "tasks_per_phase": 16, "max_steps": 8,
                      "max_new_tokens": 64, "eval_limit": 30, "parallel": 2, "max_tokens": 2048,
                      "sft": {**_SMALL_TRAIN, "lr": 3e-3, "epochs": 8},
                      "update": {**_SMALL_TRAIN, "lr": 1e-4}},
    # the paper's hyperparameters (Table 4, App. A) for GPUs: Llama-3.1-8B, vLLM rollouts, ZeRO-3 with offload
    "paper": {"model": "meta-llama/Llama-3.1-8B", "phases": 8, "tasks_per_phase": 500, "max_steps": 30,
              "rollout_policy": "vllm", "parallel": 6, "orm": "THUDM/webrl-orm-llama-3.1-8b",
              "sft": {"lr": 1e-5, **COSINE_WARMUP, "zero_stage": 3, "offload": True, "gradient_checkpointing": True, "grad_accum": 16},
              "update": {"lr": 1e-6, "zero_stage": 3, "offload": True, "gradient_checkpointing": True,
                         "grad_accum": 16}},
}


def write_settings(out: Path, settings: RunSettings) -> None:
    write_atomically(Path(out) / SETTINGS_FILE, yaml.safe_dump(settings.model_dump(mode="json"), sort_keys=False))


def read_settings(out: Path) -> RunSettings:
    path = Path(out) / SETTINGS_FILE
    if not path.is_file():
        raise UsageError(f"{out}: not a webrl train run folder (no {SETTINGS_FILE}); start a run there without "
                         "--resume")
    return RunSettings.model_validate(yaml.safe_load(path.read_text()))
