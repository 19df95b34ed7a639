#!/usr/bin/env python3
"""Run every process of a Procfile under supervisord (a maintained supervisor): a process that
exits — the model server killed by a crash, a worker killed by the OOM killer — is restarted and
the others keep running. honcho, used before, stopped every process when one exited, so one
segfault in the model took the whole platform down.

    scripts/supervise.py [Procfile]      # foreground; Ctrl-C stops everything

supervisord's own lines ("exited: model (terminated by SIGSEGV ...; not expected)", "spawned:
'model' ...") say what it restarted; each process's output goes to this terminal and to
var/log/<name>.log.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_procfile(path: Path) -> dict[str, str]:
    processes: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, command = line.partition(":")
        if not sep or not name.strip().isidentifier() or not command.strip():
            sys.exit(f"supervise: {path}:{number}: expected 'name: command', got {line!r}")
        processes[name.strip()] = command.strip()
    if not processes:
        sys.exit(f"supervise: {path} names no process")
    return processes


# Procfile entries that run once and exit (`prepare`: what chat does not need, built after the
# server is up). Exit 0 is their success: not restarted. They never exit non-zero on purpose
# (bloom_models --background records a failed part for /healthz instead), so a crash is restarted.
ONE_SHOT = frozenset({"prepare"})


def supervisord_config(processes: dict[str, str], *, var_dir: Path) -> str:
    log_dir = var_dir / "log"
    log_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        "[supervisord]", "nodaemon=true", f"logfile={log_dir / 'supervisord.log'}", "logfile_maxbytes=5MB",
        f"pidfile={var_dir / 'supervisord.pid'}", "loglevel=info", "",
        "[unix_http_server]", f"file={var_dir / 'supervisor.sock'}", "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface", "",
        "[supervisorctl]", f"serverurl=unix://{var_dir / 'supervisor.sock'}", "",
    ]
    for name, command in processes.items():
        # ${VAR:-default} in a Procfile line is shell syntax: run each line through sh, with exec
        # so the supervised pid is the process itself (signals reach it, its exit is seen).
        restart = ["autorestart=unexpected", "exitcodes=0", "startsecs=0"] if name in ONE_SHOT else \
            ["autorestart=true", "startsecs=3"]
        lines += [
            f"[program:{name}]",
            f"command=/bin/sh -c {shlex.quote('exec ' + command).replace('%', '%%')}",
            f"directory={ROOT}", "autostart=true", *restart,
            "startretries=1000", "stopasgroup=true", "killasgroup=true", "stopwaitsecs=20",
            "redirect_stderr=true", "stdout_logfile=/dev/stdout", "stdout_logfile_maxbytes=0", "",
        ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    procfile = Path(argv[1]) if len(argv) > 1 else ROOT / "Procfile"
    var_dir = Path(os.environ.get("BLOOM_VAR_DIR", ROOT / "var")).resolve()
    config = var_dir / "supervisord.conf"
    config.write_text(supervisord_config(read_procfile(procfile), var_dir=var_dir))
    binary = shutil.which("supervisord", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if not binary:
        sys.exit("supervise: supervisord not found (pip install supervisor; `make install` does)")
    print(f"supervise: {', '.join(read_procfile(procfile))} under supervisord; a process that exits is "
          f"restarted (config {config})", flush=True)
    os.execv(binary, [binary, "-n", "-c", str(config)])  # noqa: S606 - replaces this process by design


if __name__ == "__main__":
    main(sys.argv)
