"""Prepared runners for calls that repeat: the one mechanism behind every hot path (``dispatch``,
``fusion``, ``ElementwiseKernel``).

A call on plain arrays has a *signature*: what decides its plan and its kernel (op, dtypes, shapes,
strides, options, ``out=``'s layout), never the values it computes on.  ``HotCalls`` maps
signatures to runners ``f(inputs, out) -> out``; a runner returns None when this call must take the
general path after all (e.g. its output overlaps an input).  A caller looks its signature up in
``runners`` first; on the general path it ``note``s the signature: seen once, it is only remembered
(nothing is compiled for a one-off call), seen twice, its runner is prepared and kept.  A caller
whose general path builds the runner anyway ``keep``s it at once.  The map is bounded: when full,
it starts over.
"""

from __future__ import annotations

import weakref

from . import compiled_calls

#: every ``HotCalls`` alive, for ``forget_all``
_ALL: weakref.WeakSet = weakref.WeakSet()


def noted(inputs, out):
    """The entry of a signature seen once: no runner yet (the call takes the general path)."""
    return None


def no_runner(inputs, out):
    """The entry of a signature whose backend offered no runner: the general path, without asking again."""
    return None


class HotCalls:
    """Signature -> runner, bounded (see the module docstring)."""

    __slots__ = ("runners", "maxsize", "__weakref__")

    def __init__(self, maxsize: int):
        self.runners: dict = {}       # signature -> runner, ``noted`` or ``no_runner``; cleared in place
        self.maxsize = maxsize
        _ALL.add(self)

    def note(self, key, prepare):
        """One more sighting of ``key`` on the general path: the first is remembered; on the second,
        ``prepare()`` (a runner, or None for none) is kept and returned.  Otherwise None."""
        found = self.runners.get(key)
        if found is None:
            self.keep(key, noted)
            return None
        if found is noted:
            runner = self.runners[key] = prepare() or no_runner
            return runner
        return None

    def keep(self, key, runner) -> None:
        """Keep ``runner`` for ``key``."""
        if len(self.runners) >= self.maxsize and key not in self.runners:
            self.runners.clear()
        self.runners[key] = runner

    def clear(self) -> None:
        self.runners.clear()


#: option sets a function keeps compiled tables for before it starts over (``OptionTables``)
MAX_OPTION_SETS = 64


class OptionTables(dict):
    """A function's ``compiled_calls`` tables by option set: ``tables[options]`` is the table of calls
    with those options (``broadcast``, ``axis``, ``dtype=``, ``backend=``, a target shape, ...), made
    on first use; options must be hashable and equal only where they mean the same (an int axis, not
    a bool: callers check).  Bounded: when full, it starts over."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def __missing__(self, options):
        if len(self) >= MAX_OPTION_SETS:
            self.clear()
        table = self[options] = compiled_calls.table_for(f"{self.name} {options!r}")
        return table


def forget_all() -> None:
    """Forget every runner of every ``HotCalls`` and every compiled entry: what a backend prepared
    must not serve calls after that backend was replaced (``backends.registered``)."""
    for hot in list(_ALL):
        hot.clear()
    compiled_calls.clear()
