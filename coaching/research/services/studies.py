"""Studies: creation, the permuted-block allocation sequence and the study-level date shift, all
derived from the study secret."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import random

from coaching.models import StudyArm
from coaching.research import conf
from coaching.research.models import Study
from core.errors import ApplicationError


def _hmac_bytes(secret: str, label: str) -> bytes:
    return hmac.new(secret.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).digest()


def study_create(
    *, name: str, start_date: dt.date, arms: list[str] | None = None, cohort: str = "",
    duration_weeks: int = 12, date_shift_enabled: bool = False, secret: str | None = None,
    intended_sessions_per_week: int, intended_use: str,
) -> Study:
    """A study states its intended use when it is created (sessions per week the protocol asks
    of every participant, and in words why): the primary outcome is measured against it, so it
    is fixed before anyone is enrolled and exported with every row."""
    arms = list(arms or [StudyArm.COACH, StudyArm.TRACKER])
    if not 1 <= int(intended_sessions_per_week) <= 21 or not intended_use.strip():
        raise ApplicationError(
            "a study needs its intended use: intended_sessions_per_week between 1 and 21 and intended_use, a "
            "sentence saying what the protocol asks of participants and why",
            code="invalid_intended_use", field="intended_sessions_per_week")
    valid = set(StudyArm.values)
    if len(arms) < 2 or len(set(arms)) != len(arms) or not set(arms) <= valid:
        raise ApplicationError(f"arms must be ≥ 2 distinct values of {sorted(valid)}", code="invalid_arms",
                               field="arms")
    kwargs = {"secret": secret} if secret else {}
    return Study.objects.create(
        name=name, start_date=start_date, arms=arms, cohort=cohort, duration_weeks=duration_weeks,
        date_shift_enabled=date_shift_enabled, intended_sessions_per_week=int(intended_sessions_per_week),
        intended_use=intended_use.strip(), **kwargs,
    )


def block_arms(*, study: Study, stratum: str, block: int) -> list[str]:
    """The permuted block `block` of a stratum: each arm twice, shuffled by a PRNG seeded with
    HMAC(study secret, stratum:block). Deterministic, so the allocation sequence can be
    regenerated and audited from the secret alone, yet unpredictable without it."""
    arms = list(study.arms) * 2
    seed = int.from_bytes(_hmac_bytes(study.secret, f"block:{stratum}:{block}")[:8], "big")
    random.Random(seed).shuffle(arms)
    return arms


def arm_for_slot(*, study: Study, stratum: str, index: int) -> str:
    size = len(study.arms) * 2
    return block_arms(study=study, stratum=stratum, block=index // size)[index % size]


def study_date_shift_days(*, study: Study) -> int:
    """The one offset (days, a non-zero whole number of weeks within ± DATE_SHIFT_MAX_WEEKS) by
    which a shifted study's export moves every date. One offset for the whole study, not one per
    participant: every row also carries `study_week`, which ties it to the common study calendar,
    so a per-participant offset could be read back as week_start - 7·(study_week - 1). The study's
    own id is part of the HMAC input, so two studies given the same secret still differ."""
    weeks = conf.DATE_SHIFT_MAX_WEEKS
    value = int.from_bytes(_hmac_bytes(study.secret, f"shift:{study.pk}")[:8], "big")
    k = value % (2 * weeks) - weeks  # -weeks .. weeks-1
    return 7 * (k if k < 0 else k + 1)  # skip 0: a "shifted" export must never equal the real dates
