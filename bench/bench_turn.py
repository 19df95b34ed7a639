"""Chat-turn latency with the embedded model (llama.cpp, the configured BLOOM_LLM), broken down
by phase: routing, context build, model, guard, persistence, plus time to first token and total.
Runs whole turns through `coaching.turn.turn_run` (streaming on, as the SSE path does) for an
onboarded learner in a throwaway API client that is deleted afterwards.

    python bench/run.py turn --quick     # 5 turns per arm
    python bench/run.py turn             # 20 turns per arm

Two arms, alternated turn by turn: the plain-text reply grammar on (the default) and off
(BLOOM_PLAIN_REPLY_GRAMMAR). `first shown` is when the stream gate released the first guarded
text to the client (`timings.first_shown_ms`); a turn that showed nothing before the guard's end
counts its total. Half the messages ask for a list, which the gate holds back while flattening
would rewrite it.
"""

from __future__ import annotations

import contextlib
import os
import statistics

from django.core.management import call_command
from django.test import override_settings

MESSAGES = [
    "what's a good warm-up before swimming?", "give me a complete guide to freestyle breathing",
    "I feel a bit nervous about deep water", "list all the tips you have for kicking",
    "how long should I rest?", "what are the steps to learn a flip turn?",
]


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = max(0, min(len(values) - 1, round(q * (len(values) - 1))))
    return values[k]


def run(quick: bool) -> list[dict]:
    call_command("migrate", verbosity=0, interactive=False)
    from django.conf import settings

    from coaching import services
    from coaching.models import ApiClient
    from coaching.turn import ModelDown, turn_run
    from core.identity import services as identity_services

    n = 5 if quick else 20
    client = identity_services.api_client_create(name="bench_turn (temporary)")
    try:
        learner = services.learner_create(client=client)
        services.profile_update(learner=learner, primary_goal="learn to swim", goal_category="sport",
                                weekly_hours=3, best_time="evening", confidence=6)
        conversation = services.conversation_start(learner=learner)
        # warm-up turn: loads the model (not counted)
        msg, _ = services.message_receive(conversation=conversation, content="hello")
        with contextlib.suppress(ModelDown):
            turn_run(message=msg, emit=lambda t: None)
        phases: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
        failed = 0
        for i in range(n):
            for plain in ((True, False) if i % 2 == 0 else (False, True)):
                msg, _ = services.message_receive(conversation=conversation, content=MESSAGES[i % len(MESSAGES)])
                try:
                    with override_settings(BLOOM_PLAIN_REPLY_GRAMMAR=plain):
                        result = turn_run(message=msg, emit=lambda t: None)
                except ModelDown:  # e.g. a timeout on an overloaded machine: counted, not hidden
                    failed += 1
                    continue
                timings = dict(result.turn.timings)
                timings.setdefault("first_shown_ms", timings.get("total", 0.0))
                for phase, ms in timings.items():
                    phases[plain].setdefault(phase, []).append(ms)
    finally:
        ApiClient.objects.filter(pk=client.pk).delete()
    note = (f"{n} turns per arm, {settings.BLOOM_LLM.provider}:{settings.BLOOM_LLM.model}, {settings.DB_VENDOR}; "
            f"load average {os.getloadavg()[0]:.1f}")
    rows = [{"bench": "turn", "metric": "failed turns", "value": failed, "unit": "turns", "note": note}]
    for plain in (True, False):
        arm = "grammar on" if plain else "grammar off"
        for phase in ("routing", "context", "model", "guard", "persistence", "ttft_ms", "first_shown_ms", "total"):
            values = phases[plain].get(phase, [])
            name = {"ttft_ms": "ttft", "first_shown_ms": "first shown"}.get(phase, phase)
            rows.append({"bench": "turn", "metric": f"{name} p50, {arm}",
                         "value": statistics.median(values) if values else 0.0, "unit": "ms", "note": note})
            rows.append({"bench": "turn", "metric": f"{name} p95, {arm}", "value": _pct(values, 0.95), "unit": "ms"})
    return rows
