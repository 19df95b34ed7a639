"""The in-process model's lock hands the model out in arrival order and bounds the wait."""

from __future__ import annotations

import threading
import time

from core.llm.providers.llamacpp import FairLock


def _wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_waiters_get_the_lock_in_arrival_order():
    lock = FairLock()
    assert lock.acquire(timeout=1)
    order: list[int] = []

    def waiter(i: int) -> None:
        assert lock.acquire(timeout=10)
        order.append(i)
        time.sleep(0.01)
        lock.release()

    threads = []
    for i in range(8):
        t = threading.Thread(target=waiter, args=(i,))
        t.start()
        threads.append(t)
        _wait_for(lambda n=i + 1: lock.waiting() == n)  # i is queued before i+1 arrives
    lock.release()
    for t in threads:
        t.join(10)
    assert order == list(range(8))
    assert lock.waiting() == 0


def test_a_bounded_wait_gives_up_and_leaves_the_queue():
    lock = FairLock()
    assert lock.acquire(timeout=1)
    started = time.monotonic()
    assert lock.acquire(timeout=0.1) is False
    assert 0.09 <= time.monotonic() - started < 2
    assert lock.waiting() == 0
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(lock.acquire(timeout=5)))
    t.start()
    _wait_for(lambda: lock.waiting() == 1)
    lock.release()
    t.join(5)
    assert got == [True]
