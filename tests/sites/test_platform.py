"""The embedded server itself: exact resets, dirty tracking, sessions, the guarded control API, instances."""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import urllib.error
import urllib.request

import httpx
from cli_support import private_env

from webrl.config import load_config
from webrl.sites.embedded.backend import EmbeddedBackend
from webrl.sites.embedded.registry import site_spec


def write_something(shop_url: str, term: str = "webrl probe") -> None:
    """A storefront search records its term (as Magento does): a real write through the site."""
    assert httpx.get(f"{shop_url}/catalogsearch/result/", params={"q": term}).status_code == 200


def test_reset_restores_the_exact_pristine_content(pristine_store):
    shop = pristine_store.urls(0)["shopping"]
    current, pristine = pristine_store.checksums("shopping")
    assert current == pristine
    assert not pristine_store.is_dirty("shopping", 0)

    write_something(shop)
    current, pristine = pristine_store.checksums("shopping")
    assert current != pristine
    # One database behind both sites: a write through the shop dirties the admin too.
    assert pristine_store.is_dirty("shopping", 0) and pristine_store.is_dirty("shopping_admin", 0)

    results = pristine_store.reset(["shopping_admin"])
    assert {r.site for r in results} == {"shopping", "shopping_admin"}
    assert all(r.ms >= 0 for r in results)
    current, pristine = pristine_store.checksums("shopping")
    assert current == pristine
    assert not pristine_store.is_dirty("shopping", 0)


def test_reset_drops_sessions(pristine_store):
    shop = pristine_store.urls(0)["shopping"]
    with httpx.Client(base_url=shop) as client:
        client.post(
            "/customer/account/loginPost/",
            data={"login[username]": "emma.lopez@gmail.com", "login[password]": "Password.123"},
        )
        assert client.get("/customer/account/", follow_redirects=False).status_code == 200
        pristine_store.reset(["shopping"])
        assert client.get("/customer/account/", follow_redirects=False).status_code in (302, 303)


def test_status_reports_writes_and_last_reset(pristine_store):
    before = {s.site: s for s in pristine_store.status()}
    write_something(pristine_store.urls(0)["shopping"], "another probe")
    after = {s.site: s for s in pristine_store.status()}
    assert before["shopping"].writes_since_reset == 0
    assert after["shopping"].writes_since_reset > 0
    assert after["shopping"].last_reset == before["shopping"].last_reset
    assert all(s.healthy for s in after.values())


def control(backend: EmbeddedBackend, path: str, token: str | None, method: str = "GET") -> int:
    headers = {"x-webrl-token": token} if token is not None else {}
    port = backend.running().control_ports[0]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method, headers=headers, data=b"{}" if method == "POST" else None
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def test_control_api_needs_the_token(pristine_store):
    token = pristine_store.paths.token.read_text().strip()
    assert control(pristine_store, "/health", token) == 200
    for path, method in (("/health", "GET"), ("/status", "GET"), ("/reset", "POST")):
        assert control(pristine_store, path, None, method) == 403
        assert control(pristine_store, path, "wrong", method) == 403
    # The sites' own ports do not expose the control API.
    assert httpx.post(f"{pristine_store.urls(0)['shopping']}/reset").status_code in (404, 405)


def test_the_control_token_is_private_whatever_mode_it_had(tmp_path, make_config):
    """A token file left readable by others (0644) stayed so across `down` and `up`: any local user could then
    reset or inspect the sites."""
    backend = EmbeddedBackend(make_config(tmp_path, sites=["homepage"]))
    try:
        backend.up()
        backend.paths.token.chmod(0o644)
        backend.down()
        backend.up()
        assert stat.S_IMODE(backend.paths.token.stat().st_mode) == 0o600
    finally:
        backend.down()


def test_instances_are_isolated(tmp_path, make_config):
    backend = EmbeddedBackend(make_config(tmp_path, instances=2))
    try:
        backend.up()
        urls = [backend.urls(k)["shopping"] for k in range(2)]
        assert urls[0] != urls[1]
        write_something(urls[1])
        assert backend.is_dirty("shopping", 1) and not backend.is_dirty("shopping", 0)
        results = backend.reset(instance=1)
        assert {r.instance for r in results} == {1}
        assert not backend.is_dirty("shopping", 1)
        record = json.loads(backend.paths.server.read_text())
        assert record["plan"]["instances"] == 2
    finally:
        backend.down()


def test_more_than_fifty_instances_under_a_low_open_files_limit(tmp_path):
    """`webrl up --instances 51` where a process may open only 128 files: the server raises its own limit (it holds
    ~200 descriptors), and instance 50, the first whose ports are instance 0's + 25, answers and is its own."""
    env = private_env(tmp_path / "state", instances=51)
    command = f"ulimit -Sn 128 && exec {sys.executable} -m webrl up --instances 51 --sites shopping,homepage"
    up = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120, check=False)
    backend = EmbeddedBackend(load_config(environ=env))
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert all(s.healthy for s in backend.status()) and len(backend.status()) == 102
        shop = backend.urls(50)["shopping"]
        assert shop == f"http://127.0.0.1:{backend.config.sites.port('shopping', 0) + 25}"
        write_something(shop)
        assert backend.is_dirty("shopping", 50) and not backend.is_dirty("shopping", 49)
        backend.reset(instance=50)
        assert not backend.is_dirty("shopping", 50)
    finally:
        backend.down()


def test_a_snapshot_changed_after_it_was_built_is_rebuilt_at_up(tmp_path, make_config):
    """A pristine snapshot records its file's checksum when it is built; `up` rebuilds one whose content changed
    since (here: half the reviews deleted in the snapshot file), instead of serving it as pristine."""
    backend = EmbeddedBackend(make_config(tmp_path, sites=["shopping"]))
    spec = site_spec("shopping").database
    snapshot = spec.build_snapshot(backend.paths.snapshots, 0)
    (reviews,) = sqlite3.connect(snapshot).execute("SELECT COUNT(*) FROM reviews").fetchone()
    assert spec.snapshot_problem(backend.paths.snapshots, 0) is None
    with sqlite3.connect(snapshot) as conn:
        conn.execute("DELETE FROM reviews WHERE id % 2 = 0")
    assert "changed" in spec.snapshot_problem(backend.paths.snapshots, 0)
    steps = []
    try:
        backend.up(on_step=steps.append)
        assert any("rebuilding the 'store' snapshot" in step and "changed" in step for step in steps), steps
        assert backend.query("shopping", "SELECT COUNT(*) FROM reviews")[0][0] == reviews
        assert spec.snapshot_problem(backend.paths.snapshots, 0) is None
    finally:
        backend.down()


def test_server_connections_do_not_wait_for_delayed_acks():
    """The listening sockets say TCP (not protocol 0), so asyncio sets TCP_NODELAY on every connection they accept:
    without it a response's body waited for the client's delayed ACK of its headers, ~40 ms on each keep-alive
    request (a shop page and its stylesheet: ~90 ms of every navigation)."""
    import asyncio
    import socket

    from webrl.sites.embedded.server import _bind

    async def main():
        sock = _bind("127.0.0.1", 0, "test")
        accepted = asyncio.get_running_loop().create_future()

        class Accept(asyncio.Protocol):
            def connection_made(self, transport):
                conn = transport.get_extra_info("socket")
                accepted.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Accept, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname())
        try:
            return await asyncio.wait_for(accepted, 10)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(main()) != 0
