"""The web process: uvicorn serving bloom.asgi (the Procfile's `web`), N worker processes, each on
a listening socket of its own.

    python -m bloom.serve --host 127.0.0.1 --port 8000 --workers 2

Why not `uvicorn --workers N` (uvicorn 0.54, the newest release), two defects measured here with
the learner search (memory/README.md, "The web process, prepared statements and the speaker index"):

- **Nagle's algorithm stays on.** uvicorn binds the socket it shares with its workers with
  `proto` 0; accepted connections inherit it, and asyncio turns TCP_NODELAY on only for sockets
  that say IPPROTO_TCP. A response written in two parts (headers, then body) waits for the client's
  delayed ACK, ~40 ms, on every keep-alive request after the first (uvicorn issue #3149): 64 ms
  p50 with 2 workers against 19 ms with 1.
- **One worker takes every connection.** All workers wait on one socket, and the first to wake
  accepts everything queued (asyncio accepts up to its backlog per wake-up): 8 clients
  connecting at once all landed on one worker, which served them alone while the other idled.

Here each worker binds its own socket to the same address with SO_REUSEPORT, so the kernel
spreads new connections over the workers, and every socket says IPPROTO_TCP. The parent only
starts the workers, forwards SIGINT/SIGTERM to them and starts a new one when one dies; a worker
that fails at start (a bad setting, the port taken) stops the whole server. One worker runs in
this process, as plain uvicorn does."""

from __future__ import annotations

import argparse
import multiprocessing
import signal
import socket
import sys
import time

APP = "bloom.asgi:application"
STARTUP_FAILURE = 3  # uvicorn's exit code for a worker that could not start


def tcp_listener(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A bound TCP socket that says IPPROTO_TCP, so the event loop sets TCP_NODELAY on every
    connection accepted from it; with `reuse_port`, other workers can bind the same address.
    Not yet listening: the server calls listen()."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bloom.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--app", default=APP, help=f"ASGI application as module:attribute (default {APP})")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    parser.add_argument("--access-log", action="store_true", help="log every request")
    # uvicorn's defaults ("auto"): httptools and uvloop, both in requirements.txt, when they import.
    parser.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"],
                        help="HTTP parser (default auto: httptools if installed)")
    parser.add_argument("--loop", default="auto", choices=["auto", "asyncio", "uvloop"],
                        help="event loop (default auto: uvloop if installed)")
    return parser


def _serve(args: argparse.Namespace, reuse_port: bool) -> None:
    """One worker: its own socket, one uvicorn server on it (blocks until SIGINT/SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(args.app, host=args.host, port=args.port, log_level=args.log_level,
                            access_log=args.access_log, http=args.http, loop=args.loop)
    try:
        sock = tcp_listener(args.host, args.port, reuse_port=reuse_port)
    except OSError as exc:
        print(f"bloom.serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr, flush=True)
        sys.exit(STARTUP_FAILURE)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def _supervise(args: argparse.Namespace) -> int:
    spawn = multiprocessing.get_context("spawn")
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    def start() -> multiprocessing.process.BaseProcess:
        worker = spawn.Process(target=_serve, args=(args, True))
        worker.start()
        return worker

    workers = [start() for _ in range(args.workers)]
    code = 0
    while not stopping:
        time.sleep(0.5)
        for i, worker in enumerate(workers):
            if worker.is_alive() or stopping:
                continue
            if worker.exitcode == STARTUP_FAILURE:
                print(f"bloom.serve: worker {worker.pid} failed to start; stopping", file=sys.stderr, flush=True)
                stopping, code = True, STARTUP_FAILURE
                break
            print(f"bloom.serve: worker {worker.pid} exited ({worker.exitcode}); starting another",
                  file=sys.stderr, flush=True)
            workers[i] = start()
    for worker in workers:
        if worker.is_alive():
            worker.terminate()  # SIGTERM: uvicorn finishes the requests in flight, then exits
    for worker in workers:
        worker.join()
    return code


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.workers < 1:
        sys.exit("bloom.serve: --workers must be at least 1")
    print(f"bloom.serve: {args.app} on http://{args.host}:{args.port} ({args.workers} "
          f"worker{'s' if args.workers > 1 else ''})", file=sys.stderr, flush=True)
    if args.workers == 1:
        _serve(args, reuse_port=False)
    else:
        sys.exit(_supervise(args))


if __name__ == "__main__":
    main()
