"""Library-wide defaults: the memory budget that sizes every blocked loop, and progress bars.

The defaults live in one small dataclass so that a user can change them once
(:func:`set_config`) or for a block of code (:func:`config_context`) instead of
passing ``memory_budget=`` to every estimator. The default budget follows the
machine: a quarter of the memory available when kernelscale first needs it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import numbers
import re
from contextvars import ContextVar

__all__ = ["get_config", "set_config", "config_context", "parse_memory", "machine_memory_budget",
           "format_bytes", "bytes_up"]

_MIB = 2**20
# The default budget: this share of the available memory, at least the floor.
_AVAILABLE_SHARE = 0.25
_FLOOR = 256 * _MIB
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(i?b)?\s*$", re.I)


@functools.lru_cache(maxsize=1)
def machine_memory_budget():
    """The default memory budget: a quarter of the available memory, at least 256 MiB.

    Read once (psutil) when first needed. On a 24 GB machine with 20 GB free
    that is 5 GB, enough to keep FALKON's ``K(X, C)`` of 50,000 rows and 10,000
    centres (2 GB in float32) instead of recomputing it every iteration.

    Examples
    --------
    >>> from kernelscale._config import machine_memory_budget
    >>> machine_memory_budget() >= 256 * 2**20
    True
    """
    try:
        import psutil

        available = int(psutil.virtual_memory().available)
    except Exception:  # pragma: no cover - psutil missing or unable to read the machine
        return _FLOOR
    return max(_FLOOR, int(available * _AVAILABLE_SHARE))


@dataclasses.dataclass(frozen=True)
class _Config:
    # None: the machine's default (machine_memory_budget), read when first needed
    memory_budget: int | None = None
    show_progress: bool = False


# _Config is frozen, so sharing one default instance is safe
_CONFIG: ContextVar[_Config] = ContextVar("kernelscale_config", default=_Config())  # noqa: B039


def parse_memory(value, name="memory_budget"):
    """Bytes from a number or a size string such as ``"2G"``, ``"512M"``, ``"1.5GiB"``.

    Parameters
    ----------
    value : int, float or str
    name : str, default="memory_budget"
        Named in the error message.

    Returns
    -------
    bytes : int

    Examples
    --------
    >>> from kernelscale._config import parse_memory
    >>> parse_memory("2G"), parse_memory("512M"), parse_memory(4096)
    (2147483648, 536870912, 4096)
    """
    if isinstance(value, str):
        match = _SIZE.match(value)
        if not match:
            raise ValueError(f"{name} must be a number of bytes or a size such as '512M' or "
                             f"'2G', got {value!r}.")
        scale = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}[match.group(2).lower()]
        number = float(match.group(1)) * scale
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of bytes or a size such as '2G', got "
                        f"{value!r} ({type(value).__name__}).")
    else:
        number = float(value)
    if not number >= 1 or number != number or number == float("inf"):
        raise ValueError(f"{name} must be at least 1 byte, got {value!r}; pass a budget such "
                         "as '256M' or 256 * 2**20.")
    return int(number)


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|sec|m|min|h)?\s*$")


def parse_duration(value, name="time_budget"):
    """Seconds from a number or a duration string such as ``"90s"``, ``"10m"``, ``"1.5h"``.

    Examples
    --------
    >>> from kernelscale._config import parse_duration
    >>> parse_duration("10m"), parse_duration("90s"), parse_duration(2.5)
    (600.0, 90.0, 2.5)
    """
    if isinstance(value, str):
        match = _DURATION.match(value)
        negative = _DURATION.match(value.strip().lstrip("-")) if value.strip()[:1] == "-" else None
        if negative:
            raise ValueError(f"{name} must be positive, got {value!r}: give a duration such as "
                             "'90s', '10m' or '1h'.")
        if not match:
            raise ValueError(f"{name} must be seconds or a duration such as '90s', '10m' or "
                             f"'1h', got {value!r}.")
        scale = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
        seconds = float(match.group(1)) * scale[match.group(2)]
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be seconds or a duration such as '10m', got {value!r}.")
    else:
        seconds = float(value)
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{name} must be a positive, finite duration, got {value!r}.")
    return seconds


def format_bytes(n):
    """``"1.5 GiB"``-style text for a number of bytes (what ``parse_memory`` reads back).

    Examples
    --------
    >>> from kernelscale._config import format_bytes
    >>> format_bytes(3 * 2**30 // 2), format_bytes(4096)
    ('1.5G', '4K')
    """
    n = float(n)
    for unit, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{int(n)}"


def bytes_up(n):
    """:func:`format_bytes` rounded up: a budget given as the text is enough.

    Examples
    --------
    >>> from kernelscale._config import bytes_up
    >>> bytes_up(4 * 2**20 + 1), bytes_up(1000)
    ('4.01M', '1000')
    """
    for unit, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale:
            value = n / scale
            digits = max(0, 2 - int(math.floor(math.log10(value))))
            step = 10.0 ** -digits
            text = f"{math.ceil(value / step - 1e-9) * step:.{digits}f}"
            return text.rstrip("0").rstrip(".") + unit
    return f"{int(n)}"


def get_config():
    """Return the current library defaults.

    Returns
    -------
    config : dict
        ``memory_budget`` (int): the bytes that blocked loops (kernel blocks,
        feature-map transforms, kept kernel matrices) may use when an
        estimator's own ``memory_budget`` is None; ``show_progress`` (bool):
        whether long fits show a progress bar even with ``verbose=0``.

    Examples
    --------
    >>> from kernelscale import get_config
    >>> get_config()["memory_budget"] > 0
    True
    """
    config = _CONFIG.get()
    budget = config.memory_budget
    return {"memory_budget": machine_memory_budget() if budget is None else budget,
            "show_progress": config.show_progress}


def _changes(memory_budget, show_progress):
    changes = {}
    if memory_budget is not None:
        changes["memory_budget"] = parse_memory(memory_budget)
    if show_progress is not None:
        changes["show_progress"] = bool(show_progress)
    return changes


def set_config(memory_budget=None, show_progress=None):
    """Change library defaults for the rest of the session (this context).

    Parameters
    ----------
    memory_budget : int or str, default=None
        Bytes (or a size such as ``"2G"``) that blocked loops may use. None
        leaves it unchanged.
    show_progress : bool, default=None
        Show progress bars of long fits. None leaves it unchanged.

    Examples
    --------
    >>> from kernelscale import get_config, set_config
    >>> old = get_config()["memory_budget"]
    >>> set_config(memory_budget="64M")
    >>> get_config()["memory_budget"]
    67108864
    >>> set_config(memory_budget=old)
    """
    _CONFIG.set(dataclasses.replace(_CONFIG.get(), **_changes(memory_budget, show_progress)))


@contextlib.contextmanager
def config_context(memory_budget=None, show_progress=None):
    """Temporarily change library defaults inside a ``with`` block.

    Parameters
    ----------
    memory_budget : int or str, default=None
        Bytes (or a size such as ``"2G"``). None leaves it unchanged.
    show_progress : bool, default=None
        None leaves it unchanged.

    Examples
    --------
    >>> from kernelscale import config_context, get_config
    >>> with config_context(memory_budget=2**20):
    ...     get_config()["memory_budget"]
    1048576
    """
    changes = _changes(memory_budget, show_progress)  # bad values fail before the block
    token = _CONFIG.set(dataclasses.replace(_CONFIG.get(), **changes))
    try:
        yield
    finally:
        _CONFIG.reset(token)
