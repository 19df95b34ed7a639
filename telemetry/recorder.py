"""The observer that turns each finished model call into a ModelCall row. It must never break a
call: failures are logged and swallowed (core.llm.observers also guards every observer).

Two modes:
- synchronous (default): one INSERT per call in its own savepoint, visible immediately (tests,
  admin drill-down right after a turn). Costs a database round trip or three on the call path.
- buffered (`BLOOM_TELEMETRY_ASYNC=True`): the call path only puts the record on a bounded
  in-process queue; a writer thread bulk-inserts batches. Rows appear within ~0.2 s; a hard
  crash can lose what is still queued, and a full queue drops records (counted and logged)
  rather than slowing model calls down."""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading

from core.llm.observers import CallRecord
from core.llm.settings import llm_setting

logger = logging.getLogger(__name__)

BATCH_MAX = 500
BATCH_WAIT_S = 0.2
QUEUE_MAX = 20_000


class TelemetryRecorder:
    def __init__(self) -> None:
        self._queue: queue.Queue[CallRecord] = queue.Queue(maxsize=QUEUE_MAX)
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._start_lock = threading.Lock()
        self.dropped = 0

    def on_start(self, record: CallRecord) -> None:
        # One row per call, written when the outcome is known (one INSERT, no UPDATE).
        return None

    def on_end(self, record: CallRecord) -> None:
        if llm_setting("BLOOM_TELEMETRY_ASYNC", False):
            self._enqueue(record)
            return
        from telemetry.services import telemetry_record_call

        try:
            telemetry_record_call(record=record)
        except Exception:
            logger.exception("telemetry: could not record model call %s (the call itself went on)",
                             record.call_id)

    # --- buffered mode ----------------------------------------------------------------------
    def _enqueue(self, record: CallRecord) -> None:
        self._ensure_writer()
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.warning("telemetry: queue full, %d call records dropped so far", self.dropped)

    def _ensure_writer(self) -> None:
        # Started lazily and re-started after a fork (Celery prefork, gunicorn workers).
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        with self._start_lock:
            if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
                return
            if self._pid != os.getpid():
                self._queue = queue.Queue(maxsize=QUEUE_MAX)
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._write_loop, name="telemetry-writer", daemon=True)
            self._thread.start()

    def _write_loop(self) -> None:
        from django.db import connection

        from telemetry.services import telemetry_record_calls

        while True:
            batch = [self._queue.get()]
            try:
                while len(batch) < BATCH_MAX:
                    batch.append(self._queue.get(timeout=BATCH_WAIT_S))
            except queue.Empty:
                pass
            try:
                telemetry_record_calls(records=batch)
            except Exception:
                logger.exception("telemetry: could not write a batch of %d call records", len(batch))
                connection.close()  # a broken connection is reopened on the next batch
            finally:
                for _ in batch:
                    self._queue.task_done()

    def flush(self) -> None:
        """Block until every queued record is written (tests, shutdown)."""
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            self._queue.join()


recorder = TelemetryRecorder()


@atexit.register
def _flush_at_exit() -> None:
    try:
        recorder.flush()
    except Exception:  # shutting down: never raise from atexit
        logger.exception("telemetry: flush at exit failed")
