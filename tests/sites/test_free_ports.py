"""Sites on free ports (up_on_free_ports: tests, benchmarks and the Ray workers start their sites this way): a port
chosen free that another process takes before the server binds it moves the sites to other free ports."""

from __future__ import annotations

import socket

import pytest

from webrl.config import load_config
from webrl.errors import PortTaken
from webrl.sites.embedded import server
from webrl.sites.embedded.backend import PORT_ATTEMPTS, EmbeddedBackend, up_on_free_ports


def taking_a_port(holders: list[socket.socket], times: int):
    """A backend maker that, the first `times` times, lets another socket take the map's port it was given."""

    def make(config) -> EmbeddedBackend:
        if len(holders) < times:
            holder = socket.socket()
            holder.bind(("127.0.0.1", config.sites.ports.map))
            holder.listen()
            holders.append(holder)
        return EmbeddedBackend(config)

    return make


def map_config(state_dir):
    return load_config(flags={"state_dir": state_dir, "sites.sites": ["map"]}, environ={})


def test_sites_whose_port_was_taken_start_on_other_free_ports(tmp_path):
    holders: list[socket.socket] = []
    backend = up_on_free_ports(map_config(tmp_path), taking_a_port(holders, 1))
    try:
        taken = holders[0].getsockname()[1]
        assert backend.config.sites.ports.map != taken
        assert [s.healthy for s in backend.status()] == [True]
    finally:
        backend.down()
        holders[0].close()


def test_ports_taken_on_every_attempt_are_the_usage_error(tmp_path):
    holders: list[socket.socket] = []
    try:
        with pytest.raises(PortTaken, match="is already in use"):
            up_on_free_ports(map_config(tmp_path), taking_a_port(holders, PORT_ATTEMPTS))
        assert len(holders) == PORT_ATTEMPTS
    finally:
        for holder in holders:
            holder.close()


def test_a_port_taken_when_the_server_binds_it_is_told_as_the_backend_reads_it():
    """The server's last words on a taken port start with what the backend matches to raise PortTaken."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        with pytest.raises(SystemExit, match=f"^{server.BIND_FAILED} 127.0.0.1:"):
            server._bind("127.0.0.1", holder.getsockname()[1], "the map")
