"""Time budgets: sympy work that may not finish (simplify, solve, inequalities) ends with an error.

Input: a block of code, what it does (for the message) and the span it is about. Output: the
block's own result, or a `BudgetError` once the budget is spent. The limit is per operation; it
defaults to `DEFAULT_SECONDS` and the user raises it with `costlang run --time-budget SECONDS`
or, in Python, `with costlang.budget.limit(30): ...`.

Budgets count CPU time, not wall-clock time, so that a loaded machine gives the same results as
an idle one; and they cover only work on the user's input: building the parser and reading the
stdlib happen outside every budget (see `frontend.parser.parse`).

On the main thread of a POSIX process the block is interrupted by ``SIGPROF`` (``setitimer`` with
``ITIMER_PROF``, which counts the process's CPU time); elsewhere (other threads) a watcher thread
reads the working thread's CPU clock and raises the interruption asynchronously in it (where a
thread's CPU clock cannot be read, wall-clock time stands in). Either way the interruption is a
`BaseException`, so that the ``except Exception`` clauses inside sympy cannot swallow it.

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

from costlang.errors import BudgetError, Span

__all__ = ["DEFAULT_SECONDS", "MAX_SECONDS", "DEFAULT_WALL_SECONDS", "time_budget", "limit", "budget_seconds",
           "wall_clock_limit", "running", "BudgetError"]

DEFAULT_SECONDS = 20.0  # runaway symbolic work stops here; model-scale work (a zoo compare: ~5-15 s) passes
_MIN_SECONDS = 1e-6  # setitimer(0) would switch the timer off instead of firing at once
#: once a budget has run out, its timer fires again this often (CPU seconds) until the block ends:
#: an interruption that lands where Python ignores exceptions (a garbage-collector callback, a
#: `__del__`) would otherwise be lost, and the block would run on without a budget
_REPEAT_SECONDS = 0.05
#: a longer budget is as good as none; it is clamped here because timers cannot take 1e308 s
MAX_SECONDS = 1e7
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
    armed = min(max(seconds, _MIN_SECONDS), MAX_SECONDS)
    with running(what, span), _budgeted(seconds, armed, what, span):
        yield


@contextmanager
def _budgeted(seconds: float, armed: float, what, span: Optional[Span]) -> Iterator[None]:
    on_main = _signals_usable()
    clock = time.process_time if on_main else _thread_clock()
    state = {"mine": False}  # set when this budget, not an outer one, ran out
    try:
        with (_arm_signal if on_main else _arm_thread)(armed, clock, state):
            yield
    except _Expired:
        if not state["mine"]:
            raise  # an outer budget ran out first: it reports
        what = what() if callable(what) else what
        raise BudgetError(f"{what} did not finish within the time budget of {seconds:g} s of CPU time", span,
                          "raise the budget with `--time-budget SECONDS` "
                          "(in Python: `with costlang.budget.limit(SECONDS): ...`)") from None


def _signals_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


#: the states of the budgets armed by signal on the main thread, innermost last
_ARMED: list = []


def _expire(signum, frame):
    """The SIGPROF handler: interrupts the innermost budget while it is armed. A signal that lands
    once its budget has begun to disarm (the timer fired just as the block ended) is ignored: raised
    there, it would cut the clean-up short and leave the timer firing after the budget, until the
    default handler, restored as Python exits, killed the process with SIGPROF."""
    if _ARMED and _ARMED[-1]["armed"]:
        raise _Expired()


def _thread_clock() -> Callable[[], float]:
    """The calling thread's CPU clock (Linux, BSD, macOS); wall-clock time where there is none."""
    try:
        clock_id = time.pthread_getcpuclockid(threading.get_ident())
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock_id)


#: the timer and its signal: CPU time of the process (SIGPROF)
_TIMER, _SIGNAL = signal.ITIMER_PROF, signal.SIGPROF


@contextmanager
def _arm_signal(seconds: float, clock: Callable[[], float], state: dict) -> Iterator[None]:
    outer_handler = signal.getsignal(_SIGNAL)
    outer_left, _ = signal.getitimer(_TIMER)
    started = clock()
    state["mine"] = not outer_left or seconds < outer_left  # the timer that fires is this budget's
    state["armed"] = False
    try:
        _ARMED.append(state)
        signal.signal(_SIGNAL, _expire)
        state["armed"] = True
        signal.setitimer(_TIMER, min(seconds, outer_left) if outer_left else seconds, _REPEAT_SECONDS)
        yield
    finally:
        state["armed"] = False  # first, and no call before it: from here a late signal is ignored
        _CLEANING[0] += 1  # and the wall-clock limit waits until the timers are as they were
        try:
            signal.setitimer(_TIMER, 0)
            _ARMED[:] = [s for s in _ARMED if s is not state]
            signal.signal(_SIGNAL, outer_handler)
            if outer_left:  # give the outer budget back what is left of it
                left = outer_left - (clock() - started)
                signal.setitimer(_TIMER, max(left, _MIN_SECONDS), _REPEAT_SECONDS)
        finally:
            _CLEANING[0] -= 1


@contextmanager
def _arm_thread(seconds: float, clock: Callable[[], float], state: dict) -> Iterator[None]:
    thread_id = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()
    state["armed"] = True
    deadline = clock() + seconds

    def watch():
        while not done.wait(min(max(deadline - clock(), 0.001), 0.05)):
            if clock() >= deadline:
                with lock:
                    if state["armed"]:
                        state["mine"] = True
                        _async_raise(thread_id, _Expired)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        with lock:
            state["armed"] = False
            _async_raise(thread_id, None)  # withdraw an interruption not yet delivered
        done.set()


def _async_raise(thread_id: int, exc_type) -> None:
    set_async = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)
    if set_async is not None:
        set_async(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type) if exc_type else None)


# --- the whole command's wall-clock limit ------------------------------------------------------------

#: a command's limit in seconds of wall-clock time, on top of the CPU budget of each operation:
#: many operations each within their budget, or work outside every budget, still end
DEFAULT_WALL_SECONDS = 45.0
#: what is running now, innermost last: (what, span), for the message when the wall clock runs out
_RUNNING: list = []
#: budgets being disarmed (their clean-up must not be cut short by the wall-clock signal)
_CLEANING = [0]
_WALL = {"armed": False}
_DEFER_SECONDS = 0.01


class _WallExpired(BaseException):
    """Raised in the working code when the command's wall-clock limit is reached."""


@contextmanager
def running(what: Union[str, Callable[[], str]], span: Optional[Span]) -> Iterator[None]:
    """Note what is running (a statement, a simplification), for the wall-clock limit's message."""
    _RUNNING.append((what, span))
    try:
        yield
    finally:
        _RUNNING.pop()


def _wall_expire(signum, frame):
    """The SIGALRM handler: ends the command, unless a budget is being disarmed (then a moment later)."""
    if not _WALL["armed"]:
        return
    if _CLEANING[0] or any(not s["armed"] for s in _ARMED):
        signal.setitimer(signal.ITIMER_REAL, _DEFER_SECONDS)
        return
    _WALL.setdefault("running", list(_RUNNING))  # unwinding empties the list: what ran is kept here
    # still armed, and again a moment later: a raise inside a __del__ or a weakref callback (garbage
    # collection) is swallowed by Python, and the command must end all the same
    signal.setitimer(signal.ITIMER_REAL, _DEFER_SECONDS)
    raise _WallExpired()


@contextmanager
def wall_clock_limit(seconds: Optional[float], command: str, where: Optional[Span] = None) -> Iterator[None]:
    """Run a whole command within `seconds` of wall-clock time (None: no limit), else `BudgetError`
    at the statement that was running (its span; `where` when none is known). Only on the main
    thread of a POSIX process (``SIGALRM``, ``ITIMER_REAL``); elsewhere the block runs unbounded."""
    if seconds is None or not _signals_usable() or _WALL["armed"]:
        yield
        return
    depth = len(_RUNNING)
    outer = signal.signal(signal.SIGALRM, _wall_expire)
    _WALL["armed"] = True
    try:
        signal.setitimer(signal.ITIMER_REAL, min(max(seconds, _MIN_SECONDS), MAX_SECONDS))
        yield
    except _WallExpired:
        _WALL["armed"] = False
        what, span = _innermost(_WALL.pop("running", [])[depth:], where)
        raise BudgetError(f"`costlang {command}` did not finish within its wall-clock limit of {seconds:g} s; "
                          f"it was {what}", span,
                          "raise the limit with `--wall-limit SECONDS`, or simplify the statement") from None
    finally:
        _WALL["armed"] = False
        _WALL.pop("running", None)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer)
        del _RUNNING[depth:]


def _innermost(entries: list, where: Optional[Span]):
    """The words of the innermost running operation, and the place of the innermost one in the user's
    files (a simplification inside a stdlib block is reported at the user's statement that uses it)."""
    what = next((w for w, _ in reversed(entries)), "analysing the file")
    what = what() if callable(what) else what
    placed = [sp for _, sp in entries if sp is not None]
    span = next((sp for sp in reversed(placed) if not _in_stdlib(sp.file)), where or (placed or [None])[-1])
    return what, span


def _in_stdlib(file: str) -> bool:
    from pathlib import Path
    from costlang._resources import in_stdlib
    try:
        return in_stdlib(Path(file))
    except (OSError, ValueError, RuntimeError):
        return False
