"""Locust scenario for manual load runs against a running Bloom (loopback only).

    BLOOM_TOKEN=bloom_… BLOOM_CONVERSATION=<conversation uuid> BLOOM_LEARNER=<learner uuid> \\
      .venv/bin/locust -f bench/locustfile.py --headless -u 8 -r 8 -t 30s --host http://127.0.0.1:8000

Chat turns (POST a message) and memory search (GET search) for one prepared learner; the
automated figures come from bench/bench_load.py, which prepares learners itself."""

from __future__ import annotations

import os
import secrets

from locust import HttpUser, between, task

TEXTS = ["I practised for twenty minutes today.", "What should I focus on next?",
         "I prefer mornings for studying."]


class Learner(HttpUser):
    wait_time = between(0.0, 0.5)

    def on_start(self):
        host = self.host or ""
        if not host.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise RuntimeError("load runs are for loopback only")
        self.client.headers["Authorization"] = f"Bearer {os.environ['BLOOM_TOKEN']}"

    @task(1)
    def chat_turn(self):
        self.client.post(f"/api/v1/conversations/{os.environ['BLOOM_CONVERSATION']}/messages",
                         json={"content": TEXTS[secrets.randbelow(len(TEXTS))]},
                         headers={"Idempotency-Key": secrets.token_hex(8)}, name="chat turn")

    @task(3)
    def memory_search(self):
        self.client.get(f"/api/v1/memory/learners/{os.environ['BLOOM_LEARNER']}/search",
                        params={"q": "morning practice"}, name="memory search")
