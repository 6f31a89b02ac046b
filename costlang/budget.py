"""Time budgets: sympy work that may not finish (simplify, solve, inequalities) ends with an error.

Input: a block of code, what it does (for the message) and the span it is about. Output: the
block's own result, or a `BudgetError` once the budget is spent. The limit is per operation; it
defaults to `DEFAULT_SECONDS` and the user raises it with `costlang run --time-budget SECONDS`
or, in Python, `with costlang.budget.limit(30): ...`.

On the main thread of a POSIX process the block is interrupted by ``SIGALRM`` (``setitimer``);
elsewhere (other threads, platforms without ``setitimer``) a timer thread raises the interruption
asynchronously in the working thread. Either way the interruption is a `BaseException`, so that
the ``except Exception`` clauses inside sympy cannot swallow it.

>>> with time_budget(None, "adding two numbers"):
...     1 + 1
2
>>> with limit(30):
...     budget_seconds()
30.0
"""
from __future__ import annotations

import contextvars
import ctypes
import signal
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Union

from .errors import BudgetError, Span

__all__ = ["DEFAULT_SECONDS", "time_budget", "limit", "budget_seconds", "BudgetError"]

DEFAULT_SECONDS = 5.0
_MIN_SECONDS = 1e-6  # setitimer(0) would switch the timer off instead of firing at once
_limit: contextvars.ContextVar[float] = contextvars.ContextVar("costlang_time_budget",
                                                                default=DEFAULT_SECONDS)


class _Expired(BaseException):
    """Raised inside the working code when a budget runs out; turned into a `BudgetError`."""


def budget_seconds() -> float:
    """The current limit, in seconds, for one budgeted operation."""
    return _limit.get()


@contextmanager
def limit(seconds: float) -> Iterator[None]:
    """Run a block with another per-operation limit (what `--time-budget` sets)."""
    if not seconds > 0:
        raise ValueError(f"a time budget must be a positive number of seconds, not {seconds!r}")
    token = _limit.set(float(seconds))
    try:
        yield
    finally:
        _limit.reset(token)


@contextmanager
def time_budget(seconds: Optional[float], what: Union[str, Callable[[], str]],
                span: Optional[Span] = None) -> Iterator[None]:
    """Run a block; if it takes longer than `seconds` (default: the current limit), raise `BudgetError`.

    `what` completes the sentence "... did not finish within ...", e.g. "simplifying the verdict
    of kernel 'C'"; pass a function to build the text only when it is needed. Budgets nest: an
    inner one never outlives the outer one.
    """
    seconds = budget_seconds() if seconds is None else seconds
    deadline = time.monotonic() + seconds
    arm = _arm_signal if _signals_usable() else _arm_thread
    try:
        with arm(max(seconds, _MIN_SECONDS)):
            yield
    except _Expired:
        if time.monotonic() < deadline:
            raise  # an outer budget ran out first: it reports
        what = what() if callable(what) else what
        raise BudgetError(f"{what} did not finish within the time budget of {seconds:g} s", span,
                          "raise the budget with `--time-budget SECONDS` "
                          "(in Python: `with costlang.budget.limit(SECONDS): ...`)") from None


def _signals_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _expire(signum, frame):
    raise _Expired()


@contextmanager
def _arm_signal(seconds: float) -> Iterator[None]:
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left:  # give the outer budget back what is left of it
            left = outer_left - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, _MIN_SECONDS))


@contextmanager
def _arm_thread(seconds: float) -> Iterator[None]:
    thread_id = threading.get_ident()
    lock = threading.Lock()
    state = {"armed": True}

    def fire():
        with lock:
            if state["armed"]:
                _async_raise(thread_id, _Expired)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["armed"] = False
            _async_raise(thread_id, None)  # withdraw an interruption not yet delivered
        timer.cancel()


def _async_raise(thread_id: int, exc_type) -> None:
    set_async = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)
    if set_async is not None:
        set_async(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type else None)
