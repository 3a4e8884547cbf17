"""Library-wide defaults: the memory budget that sizes every blocked loop.

The defaults live in one small dataclass so that a user can change them once
(:func:`set_config`) or for a block of code (:func:`config_context`) instead of
passing ``memory_budget=`` to every estimator.
"""

from __future__ import annotations

import contextlib
import dataclasses
from contextvars import ContextVar

__all__ = ["get_config", "set_config", "config_context"]

_MIB = 2**20


@dataclasses.dataclass(frozen=True)
class _Config:
    # 256 MiB: large enough that GEMM blocks run at full BLAS speed (thousands of
    # rows), small enough to be safe beside a laptop's other work.
    memory_budget: int = 256 * _MIB


# _Config is frozen, so sharing one default instance is safe
_CONFIG: ContextVar[_Config] = ContextVar("kernelscale_config", default=_Config())  # noqa: B039


def get_config():
    """Return the current library defaults.

    Returns
    -------
    config : dict
        ``{"memory_budget": int}``: the number of bytes that blocked loops
        (kernel blocks, feature-map transforms) may use for temporaries when an
        estimator's own ``memory_budget`` is None.

    Examples
    --------
    >>> from kernelscale import get_config
    >>> get_config()["memory_budget"] > 0
    True
    """
    return dataclasses.asdict(_CONFIG.get())


def _checked_budget(memory_budget):
    if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, float)):
        raise TypeError(
            f"memory_budget must be a number of bytes, got {memory_budget!r}."
        )
    if not memory_budget >= 1:
        raise ValueError(
            f"memory_budget must be at least 1 byte, got {memory_budget!r}; "
            "pass a budget such as 256 * 2**20 (256 MiB)."
        )
    return int(memory_budget)


def set_config(memory_budget=None):
    """Change library defaults for the rest of the session (this context).

    Parameters
    ----------
    memory_budget : int, default=None
        Bytes that blocked loops may use for temporaries. None leaves it unchanged.

    Examples
    --------
    >>> from kernelscale import get_config, set_config
    >>> old = get_config()["memory_budget"]
    >>> set_config(memory_budget=64 * 2**20)
    >>> get_config()["memory_budget"]
    67108864
    >>> set_config(memory_budget=old)
    """
    changes = {}
    if memory_budget is not None:
        changes["memory_budget"] = _checked_budget(memory_budget)
    _CONFIG.set(dataclasses.replace(_CONFIG.get(), **changes))


@contextlib.contextmanager
def config_context(memory_budget=None):
    """Temporarily change library defaults inside a ``with`` block.

    Parameters
    ----------
    memory_budget : int, default=None
        Bytes that blocked loops may use for temporaries. None leaves it unchanged.

    Examples
    --------
    >>> from kernelscale import config_context, get_config
    >>> with config_context(memory_budget=2**20):
    ...     get_config()["memory_budget"]
    1048576
    """
    token = _CONFIG.set(_CONFIG.get())
    try:
        set_config(memory_budget=memory_budget)
        yield
    finally:
        _CONFIG.reset(token)
