"""Reading a fact counts as access (decay restarts): marked at once, or written behind for
searches (a per-process buffer and a daemon thread, off the request path)."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.db.models import F, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from memory import conf
from memory.models import Fact

logger = logging.getLogger(__name__)


def facts_mark_accessed(*, fact_ids: Sequence[int], at: datetime | None = None) -> int:
    """Reading a fact counts as access: one UPDATE for all of them (decay restarts)."""
    if not fact_ids:
        return 0
    return Fact.objects.filter(pk__in=list(fact_ids)).update(
        access_count=F("access_count") + 1, last_accessed_at=at or timezone.now()
    )


# Access marks from searches are written behind: a search only records (fact id, time) in this
# process's buffer and a daemon thread writes the buffer every BLOOM_MEMORY_ACCESS_FLUSH_SECONDS in
# one UPDATE, off the request path (the UPDATE inside every read cost ~12 ms). Decay semantics are
# kept: last_accessed_at becomes the time of the (latest) read, not of the write, never moves
# backwards, and access_count grows by the number of reads. A mark can be lost only if the process
# dies within that interval (at most a few seconds of recency for the facts read); atexit flushes.
_access_lock = threading.Lock()
_access_pending: dict[int, list] = {}  # fact id -> [reads, latest read time]
_access_thread: threading.Thread | None = None
_access_since = 0.0  # monotonic time of the oldest buffered mark


def facts_mark_accessed_later(*, fact_ids: Sequence[int], at: datetime | None = None) -> None:
    """Record reads for the write-behind flush (synchronous when the flush interval is 0)."""
    global _access_thread, _access_since
    at = at or timezone.now()
    if conf.access_flush_seconds() <= 0:
        _write_access({fid: [1, at] for fid in fact_ids})
        return
    with _access_lock:
        if not _access_pending:
            _access_since = time.monotonic()
        for fid in fact_ids:
            entry = _access_pending.setdefault(fid, [0, at])
            entry[0] += 1
            entry[1] = max(entry[1], at)
        if _access_thread is None or not _access_thread.is_alive():
            _access_thread = threading.Thread(target=_access_flusher, name="memory-access-flush", daemon=True)
            _access_thread.start()


def facts_access_flush() -> int:
    """Write the buffered access marks now (one UPDATE). Returns the number of facts updated."""
    with _access_lock:
        pending = dict(_access_pending)
        _access_pending.clear()
    return _write_access(pending) if pending else 0


def _write_access(pending: dict[int, list]) -> int:
    if not pending:
        return 0
    if settings.DB_VENDOR != "postgresql":
        updated = 0
        for fid, (n, at) in pending.items():
            updated += Fact.objects.filter(pk=fid).update(access_count=F("access_count") + n,
                                                          last_accessed_at=Greatest("last_accessed_at", Value(at)))
        return updated
    from django.db import connection

    ids, counts, times = zip(*((fid, n, at) for fid, (n, at) in pending.items()), strict=True)
    # The flush never waits for a row another transaction holds: it locks the rows it can, in id
    # order, and skips the locked ones (their marks of this round are dropped). Waiting would let the
    # flush deadlock with a delete of the same facts (forgetting a learner), which locks them in its
    # own order; a lost recency mark on a fact being edited or deleted costs nothing that matters.
    with connection.cursor() as cur:
        cur.execute(
            "WITH v AS (SELECT * FROM unnest(%s::bigint[], %s::int[], %s::timestamptz[]) AS v(id, n, at)), "
            "free AS (SELECT f.id FROM memory_fact f JOIN v ON v.id = f.id ORDER BY f.id "
            "FOR UPDATE OF f SKIP LOCKED) "
            "UPDATE memory_fact f SET access_count = f.access_count + v.n, "
            "last_accessed_at = GREATEST(f.last_accessed_at, v.at) "
            "FROM v WHERE f.id = v.id AND f.id IN (SELECT id FROM free)",
            [list(ids), list(counts), list(times)])
        return cur.rowcount


def _access_flusher() -> None:
    """Ticks briefly (so a changed interval takes effect at once) and flushes when the oldest
    buffered mark is `interval` old; exits when nothing is pending (the next read restarts it)."""
    from django.db import connection

    while True:
        interval = conf.access_flush_seconds()
        time.sleep(min(0.25, max(0.02, interval)))
        with _access_lock:
            if not _access_pending:
                return
            due = time.monotonic() - _access_since >= interval
        if not due:
            continue
        try:
            facts_access_flush()
        except Exception:  # a failed flush must not kill the thread; the marks of that round are lost
            logger.exception("memory: access-mark flush failed")
        finally:
            connection.close()  # no idle connection held between rounds


atexit.register(lambda: _access_pending and facts_access_flush())
