"""BLOOM_DB_POOL_MAX: with it, a process keeps its PostgreSQL connections open in a pool and a
closed Django connection goes back to it (later requests reuse its backends); without it,
each close ends the backend (one new connection per request). Observed from a child process,
since settings are read at start-up."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlparse, urlunparse

import pytest
from django.conf import settings
from django.db import connection

from bloom.tests._subprocess import ROOT

_CHILD = """
import django
django.setup()
from django.db import connection
pids = []
for _ in range(5):
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pids.append(cur.fetchone()[0])
    connection.close()  # what Django does at the end of every request (CONN_MAX_AGE 0)
print(connection.pool is not None, len(set(pids)))
"""


def _child(pool_max: str) -> str:
    url = urlunparse(urlparse(settings.DATABASE_URL)._replace(path=f"/{connection.settings_dict['NAME']}"))
    env = {"DJANGO_SETTINGS_MODULE": "bloom.settings", "DATABASE_URL": url, "BLOOM_DB_POOL_MAX": pool_max,
           "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split("\n")[-2]


@pytest.mark.django_db
def test_pool_reuses_its_backends_and_zero_opens_one_per_request(requires_postgres):
    """Five requests: with a pool of at most 2 they run on at most 2 backends (which of the two a
    request gets is the pool's choice: it may open its second connection while the first is
    busy, seen in a CI run); with BLOOM_DB_POOL_MAX=0, on 5; unset, the default pool (40)."""
    pooled, backends = _child("2").split()
    assert pooled == "True" and 1 <= int(backends) <= 2
    assert _child("0") == "False 5"
    assert _child("").split()[0] == "True"
