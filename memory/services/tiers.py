"""Tiers: facts move between hot, warm and cold by their decay score (periodic)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory import conf, rules
from memory.models import Fact, FactHistory


def tiers_apply(*, now: datetime | None = None, batch: int = 5000) -> dict[str, int]:
    """Move facts between hot/warm/cold by their decay score (computed from last access). Each move
    is a history row. Runs on the beat schedule."""
    now = now or timezone.now()
    hot_cut = now - timedelta(days=rules.tier_age_days(conf.TIER_HOT_MIN))
    warm_cut = now - timedelta(days=rules.tier_age_days(conf.TIER_WARM_MIN))
    targets = {
        "hot": Fact.objects.filter(last_accessed_at__gte=hot_cut).exclude(tier="hot"),
        "warm": Fact.objects.filter(last_accessed_at__lt=hot_cut, last_accessed_at__gte=warm_cut).exclude(tier="warm"),
        "cold": Fact.objects.filter(last_accessed_at__lt=warm_cut).exclude(tier="cold"),
    }
    moved: dict[str, int] = {}
    for tier, qs in targets.items():
        total = 0
        while True:
            with transaction.atomic():
                rows = list(qs.select_for_update(skip_locked=True)
                            .values_list("pk", "tier", "last_accessed_at")[:batch])
                if not rows:
                    break
                Fact.objects.filter(pk__in=[r[0] for r in rows]).update(tier=tier)
                FactHistory.objects.bulk_create([
                    FactHistory(fact_id=pk, change="tier", before={"tier": old},
                                after={"tier": tier, "decay": round(rules.decay_score(last, now), 4)},
                                service="memory.decay_tiers")
                    for pk, old, last in rows
                ])
                total += len(rows)
        moved[tier] = total
    return moved
