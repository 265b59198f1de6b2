"""The update's objective settings: β, λ and τ reach the objective, and one given to a form that does not use it is
refused (in the model and as `webrl rl-update`'s options), never silently ignored. Nothing trains here."""

from __future__ import annotations

import math

import pytest
import torch
from cli_support import private_env, webrl
from pydantic import ValidationError

from webrl.rl.objective import awr_weights
from webrl.rl.settings import UpdateSettings
from webrl.rl.update import objective_of


def t(*values):
    return torch.tensor(values, dtype=torch.float32)


def test_lam_reaches_the_paper_advantage():
    objective = objective_of(UpdateSettings(objective="paper", lam=0.25))
    v, v_next = t(0.25, 0.25, 0.5), t(0.5, 0.9, 0.75)
    reward, terminal = t(1, 1, 0), torch.tensor([False, True, False])
    # 0.25·(0 + 0.5 − 0.25) + 0.75·(1 − 0.25) = 0.625;  terminal: 0.25·(1 + 0 − 0.25) + 0.75·(1 − 0.25) = 0.75;
    # failure: 0.25·(0 + 0.75 − 0.5) + 0.75·(0 − 0.5) = −0.3125  (λ = 0.5 gives 0.5, 0.75, −0.125)
    advantage = objective.advantage(v, v_next, reward, torch.zeros(3), terminal)
    assert advantage.tolist() == pytest.approx([0.625, 0.75, -0.3125])


def test_awr_temperature_reaches_the_awr_weights():
    # τ = 0.5 doubles the exponent: e^1, e^−2, e^2, and e^4 ≈ 54.6 clipped to 20
    assert awr_weights(t(0.5, -1.0, 1.0, 2.0), 0.5).tolist() == pytest.approx([math.e, math.exp(-2), math.exp(2), 20.0])
    objective = objective_of(UpdateSettings(objective="awr", awr_temperature=0.5))
    logp = t(-2.0, -6.0).requires_grad_()
    loss, stats = objective.actor_loss(logp, t(-2.0, -6.0), t(2, 3), t(0.5, -0.5))
    # w = e and 1/e on ℓ/n = −1 and −2: L = −(−e − 2/e) / 2; "beta" is the mean weight
    assert loss.item() == pytest.approx((math.e + 2 / math.e) / 2)
    assert stats["beta"] == pytest.approx((math.e + 1 / math.e) / 2)


def test_defaults_reach_the_objective_whatever_the_form():
    assert objective_of(UpdateSettings()) == objective_of(UpdateSettings(objective="official"))
    paper = objective_of(UpdateSettings(objective="paper", beta=0.1))
    assert (paper.form, paper.beta, paper.lam, paper.awr_temperature) == ("paper", 0.1, 0.5, 1.0)


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"beta": 2.0}, "beta"),
        ({"beta": 1.0}, "beta"),  # the default value, given: refused all the same
        ({"objective": "awr", "beta": 0.5}, "beta"),
        ({"lam": 0.25}, "lam"),
        ({"objective": "awr", "lam": 0.5}, "lam"),
        ({"awr_temperature": 0.5}, "awr_temperature"),
        ({"objective": "paper", "awr_temperature": 2.0}, "awr_temperature"),
    ],
)
def test_a_parameter_given_to_a_form_that_does_not_use_it_is_refused(fields, named):
    with pytest.raises(ValidationError) as caught:
        UpdateSettings(**fields)
    (error,) = caught.value.errors()
    assert error["loc"] == (named,) and f"{named} (" in error["msg"] and "objective only" in error["msg"]


@pytest.mark.parametrize("fields", [{"objective": "awr", "awr_temperature": 0.0}, {"objective": "paper", "lam": 1.5}])
def test_out_of_range_parameters_are_refused(fields):
    with pytest.raises(ValidationError):
        UpdateSettings(**fields)


@pytest.mark.parametrize(
    "fields",
    [{}, {"objective": "paper", "beta": 2.0, "lam": 0.25}, {"objective": "awr", "awr_temperature": 0.5}],
)
def test_a_dump_leaves_out_the_other_forms_parameters_and_reads_back(fields):
    settings = UpdateSettings(**fields)
    dumped = settings.model_dump(mode="json")
    used = {"official": set(), "paper": {"beta", "lam"}, "awr": {"awr_temperature"}}[settings.objective]
    assert {"beta", "lam", "awr_temperature"} & dumped.keys() == used
    assert UpdateSettings.model_validate(dumped) == settings


def rl_update(tmp_path, *options: str):
    data = tmp_path / "steps.jsonl"  # never written: the settings are checked first, the data after them
    return webrl(
        private_env(tmp_path / "state"),
        "rl-update",
        "--data",
        str(data),
        "--actor",
        "tiny",
        "--out",
        str(tmp_path / "out"),
        *options,
    )


@pytest.mark.parametrize(
    "options, named",
    [(["--beta", "2"], "--beta"), (["--objective", "paper", "--awr-temperature", "0.5"], "--awr-temperature")],
)
def test_rl_update_refuses_a_parameter_its_objective_does_not_use(tmp_path, options, named):
    result = rl_update(tmp_path, *options)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1 and lines[0].startswith(f"error: {named}: ") and "objective only" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("options", [["--objective", "awr"], ["--objective", "paper", "--lam", "0.25"]])
def test_rl_update_passes_the_options_not_given_as_unset(tmp_path, options):
    # the options' defaults (--beta 1.0, --awr-temperature 1.0, ...) are not given: the settings pass, the data not
    result = rl_update(tmp_path, *options)
    assert result.returncode == 2 and "objective only" not in result.stderr
    assert f"cannot read step file {tmp_path / 'steps.jsonl'}" in " ".join(result.stderr.split())
