"""`@regiontrace.region("name")` on functions, methods and generators.

A region belongs to the thread's region stack, so it must never stay open
while control is elsewhere: a generator's region is open while the generator
runs (each resumption up to its next yield), not while its caller handles a
yielded value. Coroutines suspend into an event loop that runs other tasks on
the same thread, so they are refused rather than traced wrongly.
"""

import functools
import inspect


def _generator(new_region, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        reg = new_region()
        gen = fn(*args, **kwargs)
        value, error = None, None
        while True:
            with reg:
                try:
                    item = gen.send(value) if error is None else gen.throw(error)
                except StopIteration as stop:
                    return stop.value
            value, error = None, None
            try:
                value = yield item
            except GeneratorExit:
                with reg:
                    gen.close()
                raise
            except BaseException as e:  # thrown in by the caller: forward it
                error = e
    return wrapper


def _function(region_type, name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with region_type(name):
            return fn(*args, **kwargs)
    return wrapper


def decorate(reg, fn):
    """The body of region(name)(fn); `reg` is the region object itself."""
    if isinstance(fn, (classmethod, staticmethod)):
        return type(fn)(decorate(reg, fn.__func__))
    if not callable(fn):
        raise TypeError(f"region({reg.name!r}) decorates callables, not {type(fn).__name__}")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(
            f"region({reg.name!r}): {fn.__qualname__} is async; a region follows one thread's "
            "stack and an awaiting coroutine leaves it open while other tasks run. Put "
            "`with regiontrace.region(...)` around the synchronous parts instead.")
    # A new region object per call: one object's open entries form a stack,
    # and calls from several threads must not pop each other's entries.
    if inspect.isgeneratorfunction(fn):
        return _generator(functools.partial(type(reg), reg.name), fn)
    return _function(type(reg), reg.name, fn)
