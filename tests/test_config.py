"""Settings: config file < WEBRL_* environment < flags, and errors that say where a bad value came from."""

from __future__ import annotations

import pytest

from webrl.config import DEFAULT_PORTS, INSTANCE_STRIDE, MAX_INSTANCES, load_config
from webrl.errors import UsageError


def test_precedence_file_then_environment_then_flags(tmp_path):
    path = tmp_path / "webrl.yaml"
    path.write_text("sites:\n  instances: 2\n  seed: 5\n  host: 0.0.0.0\n  ports: {shopping: 8770}\n")
    env = {"WEBRL_SITES__SEED": "6", "WEBRL_SITES__SITES": "shopping, shopping_admin", "UNRELATED": "x"}
    config = load_config(path, {"sites.seed": 7, "sites.host": None}, environ=env)
    assert config.sites.instances == 2  # file
    assert config.sites.seed == 7  # flag beats environment beats file
    assert config.sites.host == "0.0.0.0"  # a flag left unset (None) does not override
    assert config.sites.sites == ["shopping", "shopping_admin"]  # comma list from the environment
    assert config.sites.port("shopping", 1) == 8770 + INSTANCE_STRIDE
    assert config.sites.port("shopping_admin", 0) == 7780  # untouched defaults survive a partial mapping


def test_toml_file_and_state_dir(tmp_path):
    path = tmp_path / "webrl.toml"
    path.write_text(f'state_dir = "{tmp_path / "s"}"\n[sites]\ncontrol_port = 17700\n')
    config = load_config(path, environ={})
    assert config.state_dir == tmp_path / "s"
    assert config.sites.control(2) == 17700 + 2 * INSTANCE_STRIDE


@pytest.mark.parametrize(
    ("text", "env", "flags", "fragments"),
    [
        ("sites:\n  instances: many\n", {}, {}, ["config file", "sites.instances"]),
        ("sites:\n  colour: red\n", {}, {}, ["config file", "sites.colour", "Extra inputs"]),
        ("", {"WEBRL_SITES__INSTANCES": "0"}, {}, ["WEBRL_SITES__INSTANCES", "greater than or equal to 1"]),
        ("", {}, {"sites.backend": "kubernetes"}, ["option --backend", "sites.backend"]),
        ("- just\n- a list\n", {}, {}, ["top level must be a mapping"]),
    ],
)
def test_bad_values_name_their_source(tmp_path, text, env, flags, fragments):
    path = tmp_path / "webrl.yaml"
    path.write_text(text)
    with pytest.raises(UsageError) as err:
        load_config(path, flags, environ=env)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_config(tmp_path / "nope.yaml", environ={})


def test_instance_ports_are_distinct_and_keep_the_first_fifty_where_they_were():
    sites = load_config(flags={"sites.instances": MAX_INSTANCES}, environ={}).sites
    ports = {k: [sites.port(site, k) for site in DEFAULT_PORTS] + [sites.control(k)] for k in range(MAX_INSTANCES)}
    every = [port for block in ports.values() for port in block]
    assert len(set(every)) == len(every) and all(1024 < port <= 65535 for port in every)
    assert ports[0] == [*DEFAULT_PORTS.values(), 7700]  # WebArena's ports
    for k in (1, 49):  # the 1000-apart blocks of before
        assert ports[k] == [port + k * INSTANCE_STRIDE for port in ports[0]]
    assert ports[50][0] == 7770 + 25 and ports[199][0] == 7770 + 49 * INSTANCE_STRIDE + 3 * 25


@pytest.mark.parametrize(
    ("env", "instances", "fragment"),
    [
        ({}, MAX_INSTANCES + 1, f"less than or equal to {MAX_INSTANCES}"),
        ({"WEBRL_SITES__PORTS__REDDIT": "19999"}, 60, "need port 65999 (reddit instance 46), beyond 65535"),
        ({"WEBRL_SITES__PORTS__REDDIT": "8770"}, 2, "need port 8770 twice (reddit instance 0 and shopping instance 1)"),
    ],
)
def test_instances_beyond_what_the_ports_allow_are_one_line_errors(env, instances, fragment):
    with pytest.raises(UsageError) as err:
        load_config(flags={"sites.instances": instances}, environ=env)
    assert str(err.value).startswith("option --instances: field 'sites.instances': ") and "\n" not in str(err.value)
    assert fragment in str(err.value)
