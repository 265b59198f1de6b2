"""`webrl eval`'s settings: options generated from EvalSettings, settings files (the configuration's eval: section
and --config), --print-config read back, and errors that name the layer, field and option. No sites: nothing here
runs an episode."""

from __future__ import annotations

import yaml
from cli_support import private_env, webrl

from webrl.runs.eval_settings import EVAL_OPTIONS, FILE_FIELDS, EvalSettings


def test_every_setting_a_user_gives_is_an_option_with_its_field_s_help(tmp_path):
    result = webrl(private_env(tmp_path / "state"), "eval", "--help")
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.split())
    for option, name in EVAL_OPTIONS.items():
        assert f"--{option.replace('_', '-')} " in help_text, option
        first_words = " ".join(EvalSettings.model_fields[name].description.split()[:4])
        assert first_words in help_text, (option, first_words)
    # the fields the run fills in are recorded in summary.json, never options
    assert {"backend", "task_suite", "site_resets", "verified_dataset"}.isdisjoint(EVAL_OPTIONS.values())
    assert "--actions " in help_text and "--action-space" not in help_text


def test_print_config_writes_what_config_reads_back_below_the_options(tmp_path):
    env = private_env(tmp_path / "state")
    printed = webrl(
        env, "eval", "--tasks", "miniwob:click-test:test", "--actions", "webarena", "--no-screenshots", "--print-config"
    )
    assert printed.returncode == 0, printed.stderr
    settings = yaml.safe_load(printed.stdout)
    assert tuple(settings) == FILE_FIELDS  # every file setting, and no run folder
    assert (settings["action_space"], settings["screenshots"], settings["max_steps"]) == ("webarena", False, 30)
    saved = tmp_path / "eval.yaml"
    saved.write_text(printed.stdout)
    again = webrl(env, "eval", "--config", str(saved), "--print-config")
    assert again.returncode == 0 and again.stdout == printed.stdout
    # the options override the file, the file overrides the configuration's eval: section
    configuration = tmp_path / "webrl.yaml"
    configuration.write_text(yaml.safe_dump({"eval": {"max_steps": 5, "mode": "vab"}}))
    partial = tmp_path / "partial.yaml"
    partial.write_text("eval:\n  tasks: embedded:test\n  max_steps: 7\n  limit: 9\n")
    layered = webrl(
        env, "--config", str(configuration), "eval", "--config", str(partial), "--limit", "3", "--print-config"
    )
    assert layered.returncode == 0, layered.stderr
    resolved = yaml.safe_load(layered.stdout)
    assert (resolved["max_steps"], resolved["mode"], resolved["limit"]) == (7, "vab", 3)


def test_a_bad_setting_names_its_file_field_and_option(tmp_path):
    env = private_env(tmp_path / "state")
    file = tmp_path / "bad.yaml"
    file.write_text("eval:\n  tasks: embedded:test\n  max_stps: 3\n")
    result = webrl(env, "eval", "--config", str(file))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"--config {file}: unknown setting 'max_stps'" in result.stderr
    file.write_text("tasks: embedded:test\nminiwob_time_limit_s: 0\n")
    result = webrl(env, "eval", "--config", str(file))
    message = " ".join(result.stderr.split())
    assert result.returncode == 2, result.stderr
    assert f"--config {file}: field 'miniwob_time_limit_s' (--miniwob-time-limit): Input should be greater" in message
    result = webrl(env, "eval", "--tasks", "embedded:test", "--context", "1")
    assert result.returncode == 2 and "options: field 'context' (--context)" in result.stderr
    result = webrl(env, "eval", "--max-steps", "3")
    assert result.returncode == 2 and "--tasks: give a task set or file (or --rescore RUN)" in result.stderr
