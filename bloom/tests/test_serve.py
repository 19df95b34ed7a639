"""The web process (`python -m bloom.serve`): every accepted connection has TCP_NODELAY (uvicorn's
shared socket for `--workers N` left Nagle's algorithm on: ~40 ms on each keep-alive request),
connections are spread over the workers (one shared socket let one worker take them all), a
killed worker is replaced, SIGTERM stops them all, and a port already taken is a clear error.
Real processes on real sockets; the app answers without a database (an unknown path is a 404)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bloom.serve import STARTUP_FAILURE, tcp_listener

ROOT = Path(__file__).resolve().parents[2]


def test_connections_accepted_from_the_listener_have_nodelay():
    async def accepted_nodelay() -> int:
        sock = tcp_listener("127.0.0.1", 0)
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname())
        try:
            return await asyncio.wait_for(seen, timeout=10)
        finally:
            writer.close()
            server.close()

    with tcp_listener("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP
    assert asyncio.run(accepted_nodelay()) != 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLOOM_TEST_", "PYTEST_"))}
    env.update({"DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}", "DEBUG": "0",
                "SECRET_KEY": "serve-test-" + "x" * 40, "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0",
                "BLOOM_LLM": "fake:serve", "BLOOM_VAR_DIR": str(tmp_path / "var"), "LOG_LEVEL": "WARNING"})
    return env


def _start(tmp_path: Path, port: int, workers: int, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bloom.serve", "--port", str(port), "--workers", str(workers),
                             "--log-level", "warning", *extra], cwd=ROOT, env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _get(conn: socket.socket) -> bytes:
    conn.sendall(b"GET /no-such-page HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0]


def _workers(master: int) -> set[int]:
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == master
            and "spawn_main" in _cmdline(p) and "resource_tracker" not in _cmdline(p)}


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # the process is gone
        return inodes
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _tcp_inodes(port: int, state: str) -> set[str]:
    """Inodes of TCP sockets in `state` whose local port is `port` (the server's ends)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == state:
            inodes.add(fields[9])
    return inodes


def _established_inodes(port: int) -> set[str]:
    return _tcp_inodes(port, "01")


def _listening_workers(port: int, workers: set[int]) -> set[int]:
    """The workers already holding a listening socket of their own on `port`: a worker process
    exists a while before it binds, and connections made before then all go to the others."""
    listening = _tcp_inodes(port, "0A")
    return {pid for pid in workers if _socket_inodes(pid) & listening}


def _wait_serving(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
                conn.settimeout(60)
                if _get(conn).startswith(b"HTTP/1.1"):
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("bloom.serve did not answer")


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise


@pytest.mark.timeout(300)
def test_two_workers_share_the_connections_and_a_killed_worker_is_replaced(tmp_path):
    port = _free_port()
    proc = _start(tmp_path, port, workers=2)
    try:
        _wait_serving(port, proc)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            workers = _workers(proc.pid)
            if len(workers) == 2 and _listening_workers(port, workers) == workers:
                break
            time.sleep(0.3)
        assert len(workers) == 2 and _listening_workers(port, workers) == workers, workers
        # 16 keep-alive connections opened at once, each answered: with one shared socket the
        # first worker to wake accepted them all.
        conns = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(16)]
        try:
            assert all(_get(c).startswith(b"HTTP/1.1 404") for c in conns)
            served = _established_inodes(port)
            per_worker = {pid: len(_socket_inodes(pid) & served) for pid in workers}
            assert sum(per_worker.values()) == 16
            assert all(n > 0 for n in per_worker.values()), per_worker
        finally:
            for c in conns:
                c.close()

        killed = min(workers)
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = _workers(proc.pid)
            if killed not in now and len(now) == 2:
                break
            time.sleep(0.3)
        assert killed not in now and len(now) == 2, now
        for _ in range(8):  # every new connection is answered, whichever worker takes it
            with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
                assert _get(conn).startswith(b"HTTP/1.1 404")
    finally:
        code = _stop(proc)
    assert code == 0
    assert not _workers(proc.pid)


@pytest.mark.timeout(120)
def test_a_port_already_taken_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _start(tmp_path, port, workers=2)
        try:
            out, _ = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == STARTUP_FAILURE
    assert f"cannot listen on 127.0.0.1:{port}" in out


def _mapped_libraries(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("extra, c_parts", [((), True), (("--http", "h11", "--loop", "asyncio"), False)],
                         ids=["default", "h11-asyncio"])
def test_workers_run_the_c_http_parser_and_event_loop_by_default(tmp_path, extra, c_parts):
    """httptools and uvloop (requirements.txt) are what a worker runs unless told otherwise: the
    worker process has their compiled modules loaded (its memory map), and answers either way."""
    port = _free_port()
    proc = _start(tmp_path, port, workers=2, extra=extra)
    try:
        _wait_serving(port, proc)
        deadline = time.monotonic() + 120
        while len(workers := _workers(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        for pid in workers:
            maps = _mapped_libraries(pid)
            assert ("httptools/parser" in maps) is c_parts and ("uvloop/loop" in maps) is c_parts
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            assert _get(conn).startswith(b"HTTP/1.1 404")
    finally:
        code = _stop(proc)
    assert code == 0
