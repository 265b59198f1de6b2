"""The settings of a `webrl train` run: the shipped presets, the options generated from the settings models, and
--print-config, whose output --config reads back to the same settings. No sites: nothing here runs."""

from __future__ import annotations

import re

import pytest
import yaml
from cli_support import private_env, webrl

from webrl.errors import UsageError
from webrl.rl.settings import TrainSettings, UpdateSettings
from webrl.train.settings import NESTED_OPTIONS, RunSettings, options_layer, preset, presets, resolve_run_settings


def test_every_preset_is_a_valid_settings_file_that_says_how_to_run_it():
    assert set(presets()) == {"ci", "cpu-demo", "embedded-demo", "paper", "paper-grpo", "paper-lora"}
    for name, path in presets().items():
        RunSettings.model_validate(preset(name))
        header = [line for line in path.read_text().splitlines() if line.startswith("#")]
        assert header[0].startswith(f"# {name}: ") and f"webrl train --preset {name}" in "\n".join(header)


def test_paper_lora_is_the_paper_preset_with_lora_and_what_lora_changes():
    paper, lora = RunSettings.model_validate(preset("paper")), RunSettings.model_validate(preset("paper-lora"))
    for section in ("sft", "update"):
        ours, theirs = getattr(lora, section), getattr(paper, section)
        assert ours.lora.rank == 16 and ours.lr == pytest.approx(10 * theirs.lr)
        assert (ours.zero_stage, ours.offload) == (2, False) and (theirs.zero_stage, theirs.offload) == (3, True)
        changed = {"lora", "lr", "zero_stage", "offload", "critic_lora"}
        assert ours.model_dump(exclude=changed) == theirs.model_dump(exclude=changed)
    assert lora.update.critic_settings().lora.rank == 16 and not paper.update.lora.enabled
    assert lora.model_dump(exclude={"sft", "update"}) == paper.model_dump(exclude={"sft", "update"})


def test_a_preset_that_extends_a_missing_or_circular_one_names_the_file(tmp_path, monkeypatch):
    import webrl.train.settings as settings_module

    files = {name: tmp_path / f"{name}.yaml" for name in ("a", "b", "c")}
    files["a"].write_text("extends: b\nphases: 2\n")
    files["b"].write_text("extends: a\n")
    files["c"].write_text("extends: nope\n")
    monkeypatch.setattr(settings_module, "presets", lambda: files)
    with pytest.raises(UsageError, match=r"b.yaml: extends a: a cycle \(a -> b -> a\)"):
        preset("a")
    with pytest.raises(UsageError, match="c.yaml: extends nope: unknown; choose one of a, b, c"):
        preset("c")


def test_an_update_setting_is_an_option_of_its_own_name_on_the_nested_training():
    own = [name for name in UpdateSettings.model_fields if name not in TrainSettings.model_fields]
    blocks = ["critic_lora"]  # a settings file sets a block
    assert {name: NESTED_OPTIONS.get(name) for name in own} == {
        name: None if name in blocks else ("update", name) for name in own
    }
    layer = options_layer({"critic_lr": 1e-4, "no_such": None, "lr": 0.5, "sft_lr": 0.25, "phases": 2})
    assert layer == {"update": {"critic_lr": 1e-4, "lr": 0.5}, "sft": {"lr": 0.25}, "phases": 2}
    settings = resolve_run_settings([("--preset cpu-demo", preset("cpu-demo")), ("options", layer)])
    # the option replaces one field; the preset's other update settings stay
    assert settings.update.critic_lr == 1e-4 and settings.update.lr == 0.5 and settings.update.warmup == 0.1
    assert settings.update.replay_confidence == (0.5, 1.0) and settings.sft.lr == 0.25 and settings.phases == 2


def test_a_settings_file_naming_one_sft_field_keeps_webrl_s_sft_schedule():
    settings = resolve_run_settings([("run.yaml", {"sft": {"epochs": 3}})])
    assert (settings.sft.epochs, settings.sft.lr, settings.sft.lr_schedule, settings.sft.warmup) == (
        3,
        1e-5,
        "cosine",
        0.1,
    )
    assert settings.update.lr_schedule == "constant"  # the actor and critic updates keep a constant rate


def test_print_config_writes_what_config_reads_back(tmp_path):
    env = private_env(tmp_path / "state")
    printed = webrl(
        env,
        "train",
        "--preset",
        "cpu-demo",
        "--lr",
        "0.02",
        "--no-critic-replay",
        "--sft-page-loss",
        "0.5",
        "--replay-confidence",
        "0.4",
        "0.9",
        "--seed",
        "7",
        "--print-config",
    )
    assert printed.returncode == 0, printed.stderr
    settings = RunSettings.model_validate(yaml.safe_load(printed.stdout))
    assert (settings.update.lr, settings.update.critic_replay, settings.sft.page_loss) == (0.02, False, 0.5)
    assert settings.update.replay_confidence == (0.4, 0.9) and settings.seed == 7 and settings.phases == 3
    saved = tmp_path / "run.yaml"
    saved.write_text(printed.stdout)
    again = webrl(env, "train", "--config", str(saved), "--print-config")
    assert again.returncode == 0 and again.stdout == printed.stdout


def test_a_bad_nested_value_names_its_source_field_and_option(tmp_path):
    env = private_env(tmp_path / "state")
    result = webrl(env, "train", "--preset", "ci", "--critic-lr", "-1", "--print-config")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "options: field 'update.critic_lr' (--critic-lr): Input should be greater than 0" in " ".join(
        result.stderr.split()
    )
    file = tmp_path / "bad.yaml"
    file.write_text("update:\n  objective: awr\n")
    result = webrl(env, "train", "--config", str(file), "--print-config")
    assert result.returncode == 2 and "the awr objective is the awr algorithm: --algorithm awr" in result.stderr
    file.write_text("sft:\n  page_los: 1\n")
    result = webrl(env, "train", "--config", str(file), "--print-config")
    assert result.returncode == 2 and f"--config {file}: field 'sft.page_los'" in " ".join(result.stderr.split())


def test_beta_given_with_the_official_objective_is_one_usage_line_naming_it(tmp_path):
    env = private_env(tmp_path / "state")
    result = webrl(env, "train", "--preset", "ci", "--beta", "2", "--print-config")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: options: field 'update.beta' (--beta): beta (")
    assert lines[0].endswith("applies to the paper objective only, not official")
    # a settings file names the layer: the paper objective's β, then the official objective from the options
    file = tmp_path / "paper.yaml"
    file.write_text("update:\n  objective: paper\n  beta: 0.1\n")
    result = webrl(env, "train", "--config", str(file), "--objective", "official", "--print-config")
    assert result.returncode == 2 and f"--config {file}: field 'update.beta' (--beta)" in result.stderr


def test_the_awr_algorithm_takes_awr_temperature_and_reads_it_back(tmp_path):
    env = private_env(tmp_path / "state")
    printed = webrl(env, "train", "--preset", "ci", "--algorithm", "awr", "--awr-temperature", "0.5", "--print-config")
    assert printed.returncode == 0, printed.stderr
    update = yaml.safe_load(printed.stdout)["update"]
    assert (update["objective"], update["awr_temperature"]) == ("awr", 0.5) and not {"beta", "lam"} & update.keys()
    saved = tmp_path / "run.yaml"
    saved.write_text(printed.stdout)
    again = webrl(env, "train", "--config", str(saved), "--print-config")
    assert again.returncode == 0 and again.stdout == printed.stdout
    refused = webrl(env, "train", "--preset", "ci", "--awr-temperature", "0.5", "--print-config")
    assert refused.returncode == 2 and "awr_temperature (AWR's τ) applies to the awr objective only" in refused.stderr


def test_the_awr_algorithm_refuses_another_objective():
    layers = [("run.yaml", {"algorithm": "awr", "update": {"objective": "paper"}})]
    with pytest.raises(UsageError, match="the awr algorithm trains the awr objective, not paper"):
        resolve_run_settings(layers)
    assert resolve_run_settings([("run.yaml", {"algorithm": "awr"})]).update.objective == "awr"


def test_the_grpo_algorithm_takes_its_settings_and_reads_them_back(tmp_path):
    env = private_env(tmp_path / "state")
    args = ["--algorithm", "gigpo", "--group-size", "4", "--no-critic-filter", "--clip-ratio", "0.3"]
    args += ["--step-advantage-weight", "0.5"]
    printed = webrl(env, "train", "--preset", "ci", *args, "--print-config")
    assert printed.returncode == 0, printed.stderr
    run = yaml.safe_load(printed.stdout)
    update = run["update"]
    assert (run["group_size"], update["objective"], update["clip_ratio"], update["step_advantage_weight"]) == (
        4,
        "gigpo",
        0.3,
        0.5,
    )
    assert not {"beta", "lam", "awr_temperature"} & update.keys()
    saved = tmp_path / "run.yaml"
    saved.write_text(printed.stdout)
    again = webrl(env, "train", "--config", str(saved), "--print-config")
    assert again.returncode == 0 and again.stdout == printed.stdout


@pytest.mark.parametrize(
    "layer, message",
    [
        ({"algorithm": "grpo"}, "group_size: grpo compares rollouts of the same task, needs 2 or more"),
        (
            {"algorithm": "grpo", "update": {"objective": "awr"}},
            "the grpo algorithm trains the grpo objective, not awr",
        ),
        ({"update": {"objective": "grpo"}}, "the grpo objective is the grpo algorithm: --algorithm grpo"),
        (
            {"algorithm": "grpo", "group_size": 2, "phases": 1, "update": {"step_gamma": 0.9}},
            "step_gamma (GiGPO's discount of the step returns) applies to the gigpo objective only, not grpo",
        ),
        ({"update": {"kl_coef": 0.1}}, "kl_coef (the weight of the k3 KL to the reference) applies to the grpo and "),
    ],
)
def test_the_group_algorithms_refuse_what_they_cannot_run_naming_the_field(layer, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        resolve_run_settings([("run.yaml", layer)])


def test_the_group_algorithms_run_with_or_without_the_curriculum_s_filter():
    one = resolve_run_settings([("run.yaml", {"algorithm": "grpo", "group_size": 2, "phases": 3})])
    assert (one.update.objective, one.group_size, one.critic_filter) == ("grpo", 2, True)  # the group-success band
    layer = {"algorithm": "gigpo", "group_size": 3, "critic_filter": False}
    assert resolve_run_settings([("run.yaml", layer)]).update.objective == "gigpo"


def test_training_scores_in_the_strict_mode_and_an_older_run_keeps_its_rules(tmp_path):
    """The guarded reward is training's default; a run folder written before it existed resumes with the rules
    its episodes were scored in."""
    from webrl.train.settings import read_settings, write_settings

    settings = RunSettings()
    assert settings.mode == "strict"
    write_settings(tmp_path, settings)
    assert read_settings(tmp_path).mode == "strict"
    older = yaml.safe_load((tmp_path / "settings.yaml").read_text())
    del older["mode"]
    (tmp_path / "settings.yaml").write_text(yaml.safe_dump(older))
    assert read_settings(tmp_path).mode == "webarena"


def test_lora_blocks_read_back_and_a_bad_one_names_its_field(tmp_path):
    env = private_env(tmp_path / "state")
    file = tmp_path / "lora.yaml"
    file.write_text("sft:\n  lora: {rank: 8}\nupdate:\n  lora: {rank: 8}\n  critic_lora: {rank: 4, alpha: 8}\n")
    result = webrl(env, "train", "--preset", "ci", "--config", str(file), "--print-config")
    assert result.returncode == 0, result.stderr
    settings = RunSettings.model_validate(yaml.safe_load(result.stdout))
    assert settings.sft.lora.rank == settings.update.lora.rank == 8 and settings.update.lora.alpha == 32
    assert settings.update.critic_settings().lora.rank == 4 and not RunSettings().update.lora.enabled  # full by default
    file.write_text("update:\n  critic_lora: {rank: -1}\n")
    result = webrl(env, "train", "--config", str(file), "--print-config")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr
    assert f"--config {file}: field 'update.critic_lora.rank'" in lines[0]
    file.write_text("rollout_policy: vllm\nsft:\n  lora: {rank: 8}\n")
    assert webrl(env, "train", "--config", str(file), "--print-config").returncode == 0  # vLLM serves the adapters
    file.write_text("rollout_policy: vllm\nupdate:\n  lora: {rank: 1024}\n")
    result = webrl(env, "train", "--config", str(file), "--print-config")
    assert result.returncode == 2 and "update.lora.rank: vLLM serves adapters of rank 512 at most" in result.stderr
