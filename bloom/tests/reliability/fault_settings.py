"""Settings for the processes the fault suite starts (web, worker, relay): the project settings
plus model-layer resilience knobs the suite needs short (breaker threshold and cool-down, backoff).
Everything else comes from the environment the suite passes, exactly as in production."""

import os

from bloom.settings import *  # noqa: F403

BLOOM_LLM_BREAKER_THRESHOLD = int(os.environ.get("BLOOM_LLM_BREAKER_THRESHOLD", "2"))
BLOOM_LLM_BREAKER_COOLDOWN = float(os.environ.get("BLOOM_LLM_BREAKER_COOLDOWN", "4"))
BLOOM_LLM_BACKOFF = 0.05
BLOOM_LLM_BACKOFF_MAX = 0.2
