"""Chat-turn latency with the embedded model (llama.cpp, the configured BLOOM_LLM), broken down
by phase: routing, context build, model, guard, persistence, plus time to first token and total.
Runs whole turns through `coaching.turn.turn_run` (streaming on, as the SSE path does) for an
onboarded learner in a throwaway API client that is deleted afterwards.

    python bench/run.py turn --quick     # 5 turns
    python bench/run.py turn             # 20 turns
"""

from __future__ import annotations

import contextlib
import statistics

from django.core.management import call_command

MESSAGES = [
    "what's a good warm-up before swimming?", "I feel a bit nervous about deep water",
    "how can I breathe better when swimming freestyle?", "any tip for kicking?", "how long should I rest?",
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
        phases: dict[str, list[float]] = {}
        failed = 0
        for i in range(n):
            msg, _ = services.message_receive(conversation=conversation, content=MESSAGES[i % len(MESSAGES)])
            try:
                result = turn_run(message=msg, emit=lambda t: None)
            except ModelDown:  # e.g. a timeout on an overloaded machine: counted, not hidden
                failed += 1
                continue
            for phase, ms in result.turn.timings.items():
                phases.setdefault(phase, []).append(ms)
    finally:
        ApiClient.objects.filter(pk=client.pk).delete()
    note = f"{n} turns, {settings.BLOOM_LLM.provider}:{settings.BLOOM_LLM.model}, {settings.DB_VENDOR}"
    rows = [{"bench": "turn", "metric": "failed turns", "value": failed, "unit": "turns", "note": note}]
    for phase in ("routing", "context", "model", "guard", "persistence", "ttft_ms", "total"):
        values = phases.get(phase, [])
        name = "ttft" if phase == "ttft_ms" else phase
        rows.append({"bench": "turn", "metric": f"{name} p50", "value": statistics.median(values) if values else 0.0,
                     "unit": "ms", "note": note})
        rows.append({"bench": "turn", "metric": f"{name} p95", "value": _pct(values, 0.95), "unit": "ms", "note": note})
    return rows
