"""Real processes for the fault suite and the load bench: a throw-away redis-server on its own
port, the ASGI web server (uvicorn), Celery workers and the outbox relay as subprocesses, and the
fake Ollama server (real llama.cpp behind Ollama's wire protocol) on a fixed port so it can be
stopped and started again at the same address. Every process is started in its own session so a
kill reaches all of it; every start has a bounded wait; `stop_all` is for `finally` blocks."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], object], *, timeout: float, what: str, interval: float = 0.25):
    """Poll `predicate` until truthy (returned) or fail after `timeout` seconds, naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except Exception:  # a service still starting: keep polling until the deadline
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Proc:
    """One subprocess in its own session, output to a log file (shown when a test fails)."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], log_dir: Path):
        self.name, self.cmd, self.env = name, cmd, env
        self.log_path = log_dir / f"{name}.log"
        self.popen: subprocess.Popen | None = None

    def start(self) -> Proc:
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
        self.popen = subprocess.Popen(self.cmd, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        log.close()
        return self

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def kill9(self) -> None:
        """SIGKILL to the whole process group: no shutdown handler, no ack, like a lost machine."""
        if self.alive:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=10)

    def stop(self, timeout: float = 15) -> None:
        if not self.alive:
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill9()

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class RedisInstance:
    """A dedicated redis-server (no persistence) that the suite may stop and start at will."""

    def __init__(self, port: int, log_dir: Path):
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="bloom-rel-redis-"))
        self.proc = Proc(f"redis-{port}", ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                           "--save", "", "--appendonly", "no", "--dir", str(self.dir)],
                         dict(os.environ), log_dir)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc.start()
        wait_until(lambda: port_open(self.port), timeout=15, what=f"redis on port {self.port}")

    def stop(self) -> None:
        self.proc.stop()
        wait_until(lambda: not port_open(self.port), timeout=10, what=f"redis on port {self.port} to stop")


def redis_idle(port: int) -> bool:
    """No message queued or taken-but-unacked on the dedicated Redis (all queues of the app)."""
    def cli(*args: str) -> int:
        out = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=5)
        return int(out.stdout.strip() or 0)

    queued = sum(cli("llen", q) for q in ("memory", "eval", "default"))
    return queued == 0 and cli("hlen", "unacked") == 0


def fake_ollama_on(port: int, mode: str = "ok", delay: float = 8.0):
    """The model-layer engineer's fake Ollama server (bloom/tests/llm/fake_ollama_server.py), bound
    to a FIXED port so that "stop the model server" and "start it again" keep one OLLAMA_HOST."""
    from bloom.tests.llm.fake_ollama_server import FAKE_OLLAMA_MODEL, FakeOllamaServer, _Handler

    class Handler(_Handler):
        """Adds mode "garbage": structured (JSON-schema) requests get prose back, deterministically.
        (The fake's own "bad_json" mode only drops the constraint; the real model then often
        writes valid JSON anyway, so malformed output would not be guaranteed.)"""

        def _body(self):
            if not hasattr(self, "_cached_body"):
                self._cached_body = super()._body()
            return self._cached_body

        def do_POST(self):
            body = self._body()
            if self.server.mode == "garbage" and self.path == "/api/chat" and body.get("format"):
                text = "Sure! The learner likes podcasts, here you go: {facts: [preference"
                if body.get("stream", True):
                    self._start_ndjson()
                    self._line({"model": body["model"], "message": {"role": "assistant", "content": text},
                                "done": False})
                    self._line({"model": body["model"], "message": {"role": "assistant", "content": ""},
                                "done": True, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 12})
                    return self._end_chunks()
                return self._json(200, {"model": body["model"], "message": {"role": "assistant", "content": text},
                                        "done": True, "done_reason": "stop", "prompt_eval_count": 1,
                                        "eval_count": 12})
            return super().do_POST()

    class FixedPortFakeOllama(FakeOllamaServer):
        def __init__(self):
            ThreadingHTTPServer.__init__(self, ("127.0.0.1", port), Handler)
            self.mode, self.models, self.delay, self.requests = mode, (FAKE_OLLAMA_MODEL,), delay, []

    server = FixedPortFakeOllama()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                              name=f"fake-ollama-{port}")
    thread.start()

    def stop():
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    server.stop = stop
    return server


def warm_fake_ollama(port: int) -> None:
    """Load the backing model once (a tiny generation), so the first real call is not a cold start."""
    import httpx

    from bloom.tests.llm.fake_ollama_server import FAKE_OLLAMA_MODEL

    httpx.post(f"http://127.0.0.1:{port}/api/chat", timeout=120,
               json={"model": FAKE_OLLAMA_MODEL, "stream": False, "options": {"num_predict": 2},
                     "messages": [{"role": "user", "content": "hi"}]}).raise_for_status()


def stack_env(*, database: dict, broker_url: str, ollama_host: str | None, extra: dict | None = None) -> dict:
    """Environment for web/worker/relay subprocesses: the same settings module, database and
    broker as each other; the model is Ollama at `ollama_host` (None: the embedded default)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLOOM_TEST_", "PYTEST_"))}
    user = database.get("USER") or "postgres"
    password = f":{database['PASSWORD']}" if database.get("PASSWORD") else ""
    env.update({
        "DJANGO_SETTINGS_MODULE": "bloom.tests.reliability.fault_settings",
        "DATABASE_URL": f"postgres://{user}{password}@{database.get('HOST') or '127.0.0.1'}:"
                        f"{database.get('PORT') or 5432}/{database['NAME']}",
        "CELERY_BROKER_URL": broker_url,
        "LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    })
    if ollama_host:
        from bloom.tests.llm.fake_ollama_server import FAKE_OLLAMA_MODEL

        env.update({"BLOOM_LLM": f"ollama:{FAKE_OLLAMA_MODEL}", "OLLAMA_HOST": ollama_host})
    env.update(extra or {})
    return env


def web(env: dict, port: int, log_dir: Path, name: str = "web") -> Proc:
    proc = Proc(name, [sys.executable, "-m", "bloom.serve", "--host", "127.0.0.1", "--port", str(port),
                       "--log-level", "warning"], env, log_dir).start()
    wait_until(lambda: port_open(port) or not proc.alive, timeout=60, what="the web server")
    if not proc.alive:
        raise RuntimeError(f"web server exited:\n{proc.tail()}")
    return proc


def worker(env: dict, log_dir: Path, name: str = "worker") -> Proc:
    # solo pool: the task runs in the worker process itself, so a SIGKILL really interrupts it.
    return Proc(name, [str(VENV_BIN / "celery"), "-A", "bloom", "worker", "-Q", "memory,eval,default",
                       "--pool", "solo", "--concurrency", "1", "--loglevel", "WARNING", "-n", f"{name}@%h",
                       "--without-gossip", "--without-mingle", "--without-heartbeat"], env, log_dir).start()


def relay(env: dict, log_dir: Path, interval: float = 1.0) -> Proc:
    return Proc("relay", [sys.executable, "manage.py", "outbox_relay", "--forever", "--interval", str(interval)],
                env, log_dir).start()


def model_server_ready(port: int) -> bool:
    import httpx

    return httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200


def model_server(env: dict, port: int, log_dir: Path, name: str = "model") -> Proc:
    """The embedded model server (`manage.py model_server`): real llama.cpp behind the OpenAI
    protocol, as `make run` starts it."""
    proc = Proc(name, [sys.executable, "manage.py", "model_server", "--port", str(port)], env, log_dir).start()
    wait_until(lambda: model_server_ready(port) or not proc.alive, timeout=120, what="the model server")
    if not proc.alive:
        raise RuntimeError(f"model server exited:\n{proc.tail()}")
    return proc


def stop_all(*procs) -> None:
    for proc in procs:
        if proc is None:
            continue
        with contextlib.suppress(Exception):
            proc.stop()
