"""Learner search under concurrent load over real HTTP: bloom.asgi served by several worker
processes on 127.0.0.1, 8 clients (and 1, for the latency of a search alone) each sending one
`GET /api/v1/memory/learners/<uuid>/search` after another with a Bearer token, for a fixed window
per arm; searches/s, p50/p95/p99, errors and the web workers' CPU per search:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_search BLOOM_LLM=fake:x \
        .venv/bin/python bench/run.py memory_load

One learner holds three conversations of memory/eval_data/longconv_v1.json (conv-0 to conv-2,
1,594 turns as "<speaker>: <text>", stored through the batch ingest with client-sent vectors, so
every rule applies; 1,056 facts remain). The 245 questions of those conversations are the
queries. The servers of CONFIGS are started side by side, all with the production settings (a
pool of open connections per worker, prepared search statements, the one-hop ASGI handler):
Bloom's web process (`python -m bloom.serve`, the Procfile's `web`) with 2 and with 4 workers and
with 2 on the pure-Python HTTP parser and event loop, and plain `uvicorn --workers 2`, whose
workers share one socket (bloom/serve.py says what that costs); optionally an older checkout
beside them (BENCH_LOAD_BASELINE, below). Every arm runs on each in turn, and PostgreSQL's CPU per
search is reported beside the web workers':

- "repeated text": the questions over and over; every worker has embedded each of them in a
  warm-up first, so the query vector comes from the query cache and the embedding is not measured
  (a GET cannot carry a client vector);
- the same with access marks on (the API's default, written behind) instead of `touch=false`;
- "new text": every request a text never sent before (a question plus a request number), so each
  search embeds its query in the worker (ONNX MiniLM, one thread); with 8 clients and with 1.

The load generator is a separate process (asyncio, one keep-alive connection per client, the HTTP
request written by hand: far cheaper than an HTTP library) on the same 2 cores as the web workers
and PostgreSQL; its CPU share is reported. A non-200 answer or a failed connection is an error.
Production settings otherwise (DEBUG off), the throttle raised out of the way."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "memory" / "eval_data" / "longconv_v1.json"
CLIENTS = 8
# Servers started side by side, each with the production settings (a pool of open connections per
# worker, bloom.asgi's one-hop handler): Bloom's web process (bloom/serve.py: a socket per worker,
# SO_REUSEPORT, TCP_NODELAY) with 2 and with 4 workers, and plain `uvicorn --workers 2` (one
# socket shared by the workers), to measure what the launcher changes.
CONFIGS = (("uvicorn --workers 2", "uvicorn", 2, ()),
           ("bloom.serve, 2 workers", "bloom.serve", 2, ()),
           ("bloom.serve, 4 workers", "bloom.serve", 4, ()),
           # The pure-Python HTTP parser and event loop, which uvicorn uses when httptools and uvloop
           # are not installed (they are in requirements.txt since the tenth round).
           ("bloom.serve, 2 workers, h11 + asyncio", "bloom.serve", 2, ("--http", "h11", "--loop", "asyncio")),
           # Queries embedded with the exact MiniLM graph instead of the int8 query graph.
           ("bloom.serve, 2 workers, exact query vectors", "bloom.serve", 2, ()))
# Settings a server of CONFIGS runs with on top of the bench's environment.
CONFIG_ENV = {"bloom.serve, 2 workers, exact query vectors": {"BLOOM_QUERY_EMBEDDINGS": "exact"}}
# Optional, to compare two versions of the code in one run (the machine's speed drifts between
# runs): BENCH_LOAD_BASELINE=<another checkout of Bloom, e.g. a `git worktree` of an older commit>
# adds its web process, `bloom.serve` with 2 workers, started from that tree with this venv and
# database (the two trees must have the same migrations); BENCH_LOAD_SERVERS=<names, separated by ";">
# keeps only the servers named (of CONFIGS and "baseline").
BASELINE = os.environ.get("BENCH_LOAD_BASELINE", "")
ONLY = {n.strip() for n in os.environ.get("BENCH_LOAD_SERVERS", "").split(";") if n.strip()}


def servers() -> list[tuple[str, str, int, tuple[str, ...], Path]]:
    """(name, launcher, workers, extra arguments, tree) of every server this run starts."""
    chosen = [(name, launcher, workers, extra, ROOT) for name, launcher, workers, extra in CONFIGS]
    if BASELINE:
        tree = Path(BASELINE).resolve()
        rev = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip() or tree.name
        chosen.append((f"baseline {rev}: bloom.serve, 2 workers", "bloom.serve", 2, (), tree))
    if ONLY:
        chosen = [c for c in chosen if c[0] in ONLY or ("baseline" in ONLY and c[4] != ROOT)]
    return chosen


ARMS = (("1 client, repeated text, touch=false", False, False, 1),
        ("repeated text, touch=false", False, False, CLIENTS),
        ("repeated text, access marks on", True, False, CLIENTS),
        ("new text, touch=false", False, True, CLIENTS),
        # What one client waits for with a question never asked before (embedded in the worker):
        # #17's HTTP p95 goal, read without the query cache's help.
        ("1 client, new text, touch=false", False, True, 1))


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))] if values else float("nan")


# --- the load generator (runs as its own process: `python bench_memory_load.py --client <json>`) ---------
async def _one_client(port: int, token: str, paths, stop_at: float, out: dict, close: bool = False) -> None:
    reader = writer = None
    while time.monotonic() < stop_at:
        path = next(paths)
        headers = ["Host: 127.0.0.1", f"Authorization: Bearer {token}", "Accept: application/json"]
        if close:
            headers.append("Connection: close")
        request = "\r\n".join([f"GET {path} HTTP/1.1", *headers, "", ""]).encode()
        t0 = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            status = int((await reader.readline()).split()[1])
            length, chunked, closing = None, False, False
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                name, value = name.strip().lower(), value.strip().lower()
                if name == "content-length":
                    length = int(value)
                elif name == "transfer-encoding" and "chunked" in value:
                    chunked = True
                elif name == "connection" and value == "close":
                    closing = True
            if chunked:
                while size := int((await reader.readline()).strip(), 16):
                    await reader.readexactly(size + 2)
                await reader.readline()
            elif length is not None:
                await reader.readexactly(length)
            if close or closing:
                writer.close()
                writer = None
        except (OSError, ValueError, IndexError, asyncio.IncompleteReadError) as exc:
            status = f"{type(exc).__name__}"
            if writer is not None:
                writer.close()
            writer = None
        out["lat"].append(time.perf_counter() - t0)
        out["status"][str(status)] = out["status"].get(str(status), 0) + 1
    if writer is not None:
        writer.close()


def _client_main(spec: dict) -> None:
    import itertools

    def paths(i: int):
        base, queries, suffix = spec["path"], spec["queries"], spec["touch"]
        for n in itertools.count():
            q = queries[(i * 7 + n) % len(queries)]
            if spec["new_text"]:
                q = f"{q} {i}-{n}-{spec['salt']}"  # a text no worker has embedded
            yield f"{base}?q={quote(q)}&limit=10{suffix}"

    async def main() -> dict:
        out = {"lat": [], "status": {}}
        started = time.monotonic()
        stop_at = started + spec["seconds"]
        await asyncio.gather(*(_one_client(spec["port"], spec["token"], paths(i), stop_at, out, spec["close"])
                               for i in range(spec["clients"])))
        out["elapsed"] = time.monotonic() - started
        return out

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    out = asyncio.run(main())
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu"] = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    sys.stdout.write(json.dumps(out))


def _load(port: int, token: str, path: str, queries: list[str], *, seconds: float, touch: bool,
          new_text: bool, clients: int = CLIENTS, close: bool = False) -> dict:
    spec = {"port": port, "token": token, "path": path, "queries": queries, "seconds": seconds,
            "touch": "" if touch else "&touch=false", "new_text": new_text, "clients": clients,
            "salt": secrets.token_hex(3), "close": close}
    done = subprocess.run([sys.executable, __file__, "--client", json.dumps(spec)], capture_output=True, text=True,
                          timeout=seconds + 120, check=True)
    return json.loads(done.stdout)


# --- the run ---------------------------------------------------------------------------------------------
def _cpu_seconds(select) -> float | None:
    """CPU seconds (utime + stime) used so far by the processes `select(comm, stat fields)` picks,
    from /proc; None when none was picked."""
    total, seen = 0.0, False
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            comm = (proc / "comm").read_text().strip()
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if select(comm, fields):
            seen = True
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total if seen else None


def _worker_cpu(master: int) -> float:
    """The server's processes: the master's children (the workers)."""
    return _cpu_seconds(lambda comm, fields: int(fields[1]) == master) or 0.0  # fields[1]: the parent pid


def _postgres_cpu() -> float | None:
    """The PostgreSQL server's processes on this machine (every backend, the bench's own idle
    connections included); None if none is readable (a server in a container or on another host)."""
    return _cpu_seconds(lambda comm, fields: comm == "postgres")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(db_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLOOM_TEST_", "PYTEST_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "bloom.settings", "DATABASE_URL": db_url, "DEBUG": "0",
                "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0",
                "BLOOM_THROTTLE_RATE": "1000000/min", "LOG_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1"})
    return env


def _start_web(env: dict, port: int, log: Path, launcher: str, workers: int, tree: Path = ROOT,
               extra: tuple[str, ...] = ()) -> subprocess.Popen:
    if launcher == "uvicorn":
        cmd = [str(Path(sys.executable).parent / "uvicorn"), "bloom.asgi:application", "--workers", str(workers)]
    else:
        cmd = [sys.executable, "-m", "bloom.serve", "--workers", str(workers), *extra]
    proc = subprocess.Popen([*cmd, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
                            + (["--no-access-log"] if launcher == "uvicorn" else []),
                            cwd=tree, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"uvicorn exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("uvicorn did not open its port")


def _stop_web(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the master and its two workers
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def run(quick: bool) -> list[dict]:
    from bench.bench_memory_http import store_turns
    from core.identity.models import ApiClient, Learner
    from core.identity.services import api_token_create

    db_url = os.environ.get("DATABASE_URL", "")
    if not db_url.startswith("postgres"):
        raise RuntimeError("bench_memory_load needs DATABASE_URL=postgres://…")
    seconds = 8.0 if quick else 30.0
    env = _env(db_url)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True,
                   timeout=600)
    data = json.loads(DATA.read_text())["conversations"][:3]
    owner = ApiClient.objects.create(name=f"bench-memory-load-{time.time_ns()}")
    _, token = api_token_create(client=owner, name="bench")
    learner = Learner.objects.create(client=owner, display_name="load")
    rows: list[dict] = []
    webs: list[tuple[str, int, subprocess.Popen]] = []
    warm_errors = 0
    try:
        facts = store_turns(learner.pk, [t for conv in data for t in conv["turns"]])
        # The state autovacuum reaches within minutes in production: the table's statistics and
        # visibility after the bulk load (and after the rows earlier runs deleted), which the
        # prepared statements' plans are made from.
        from django.db import connection

        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE memory_fact")
        queries = [q["question"] for conv in data for q in conv["questions"]]
        path = f"/api/v1/memory/learners/{learner.research_id}/search"
        log_dir = ROOT / "var"
        log_dir.mkdir(parents=True, exist_ok=True)
        for name, launcher, workers, extra, tree in servers():
            port = _free_port()
            log = log_dir / f"bench-memory-load-{len(webs)}.log"
            webs.append((name, port, _start_web(env | CONFIG_ENV.get(name, {}), port, log, launcher, workers, tree,
                                                extra)))
        for _, port, _ in webs:
            # Warm-up, not measured: models loaded in every worker and each query embedded by each.
            # A new connection per request, so requests land on every worker (a keep-alive
            # connection stays with one worker, and one worker may get none of 8); each query is
            # sent ~10 times, so a 4-worker server leaves a few percent unseen by a worker.
            warm = _load(port, token, path, queries, seconds=8 if quick else 40, touch=False, new_text=False,
                         close=True)
            warm_errors += sum(n for s, n in warm["status"].items() if s != "200")
        # Each arm runs the servers in turn, in the opposite order to the arm before: the machine
        # warms up over the run (the load average rises), which would favour whichever came first.
        for n, (arm, touch, new_text, clients) in enumerate(ARMS):
            for name, port, web in (webs if n % 2 == 0 else webs[::-1]):
                load_before, cpu_before, pg_before = os.getloadavg()[0], _worker_cpu(web.pid), _postgres_cpu()
                res = _load(port, token, path, queries, seconds=seconds, touch=touch, new_text=new_text,
                            clients=clients)
                ok = res["status"].get("200", 0)
                cpu_ms = 1000 * (_worker_cpu(web.pid) - cpu_before) / max(1, ok)
                pg_after = _postgres_cpu()
                pg_ms = (1000 * (pg_after - pg_before) / max(1, ok)) if pg_after is not None else None
                errors = sum(n for s, n in res["status"].items() if s != "200")
                lat = res["lat"]
                label = f"{name}, {arm}"
                note = (f"p50 {1000 * pct(lat, 50):.1f} / p95 {1000 * pct(lat, 95):.1f} / p99 "
                        f"{1000 * pct(lat, 99):.1f} ms, {errors} errors; load generator "
                        f"{100 * res['cpu'] / res['elapsed']:.0f}% of a core; load average {load_before:.2f} -> "
                        f"{os.getloadavg()[0]:.2f}")
                rows.append({"bench": "memory.load", "metric": f"{label}: searches/s",
                             "value": ok / res["elapsed"], "unit": "req/s", "note": note})
                rows.append({"bench": "memory.load", "metric": f"{label}: p95", "value": 1000 * pct(lat, 95),
                             "unit": "ms"})
                rows.append({"bench": "memory.load", "metric": f"{label}: errors", "value": errors, "unit": "req",
                             "note": str(dict(sorted(res["status"].items())))})
                rows.append({"bench": "memory.load", "metric": f"{label}: web workers' CPU per search",
                             "value": cpu_ms, "unit": "ms", "note": "PostgreSQL's share not included"})
                if pg_ms is not None:
                    rows.append({"bench": "memory.load", "metric": f"{label}: PostgreSQL's CPU per search",
                                 "value": pg_ms, "unit": "ms", "note": "every postgres process on the machine"})
                print(f"# memory_load: {label}: {note}", file=sys.stderr, flush=True)
        rows.append({"bench": "memory.load", "metric": "setup", "value": facts, "unit": "facts",
                     "note": f"{CLIENTS} clients (unless said) for {seconds:.0f} s per arm, servers "
                             f"{', '.join(name for name, *_ in webs)}; {warm_errors} errors in the warm-ups; "
                             "the load generator shares the 2 cores with the web workers and PostgreSQL"})
    finally:
        for _, _, web in webs:
            _stop_web(web)
        from bench.bench_memory import _cleanup

        _cleanup(owner)
    return rows


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--client":
    _client_main(json.loads(sys.argv[2]))
