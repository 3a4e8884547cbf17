"""The learned kernel widths as text and as a bar chart (``kernelscale tune``)."""

from __future__ import annotations

import numpy as np

__all__ = ["widths_lines", "draw_widths"]


def widths_lines(widths, names=None, top=10):
    """Printable lines: the features by relevance, most relevant first.

    Parameters
    ----------
    widths : KernelWidths
        Fitted.
    names : list of str, default=None
        Feature names (None: ``x0``, ``x1``, ...).
    top : int, default=10
        Features listed; the rest are summed on one line.

    Returns
    -------
    lines : list of str

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> w = SimpleNamespace(gamma_=np.array([0.5, 1e-9]), feature_relevance_=np.array([1.0, 0.0]),
    ...                     n_iter_=3, initial_loss_=0.9, loss_=0.5)
    >>> widths_lines(w)[1]
    '  x0           relevance 1.0000  gamma 0.5'
    """
    relevance, gamma = widths.feature_relevance_, widths.gamma_
    names = names or [f"x{j}" for j in range(gamma.size)]
    order = np.argsort(relevance)[::-1]
    lines = [f"kernel widths learned in {widths.n_iter_} steps (hold-out loss "
             f"{widths.initial_loss_:.4g} -> {widths.loss_:.4g}), features by relevance:"]
    width = max([12] + [len(names[j]) for j in order[:top]])
    for j in order[:top]:
        lines.append(f"  {names[j]:<{width}s} relevance {relevance[j]:.4f}  "
                     f"gamma {gamma[j]:.3g}")
    if order.size > top:
        rest = order[top:]
        lines.append(f"  ... {rest.size} more, relevance {relevance[rest].sum():.4f} together")
    return lines


def draw_widths(widths, path, names=None, title=None):
    """Write a PNG bar chart of every feature's relevance, in column order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    relevance = widths.feature_relevance_
    names = names or [f"x{j}" for j in range(relevance.size)]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.28 * relevance.size + 2), 3.6))
    ax.bar(np.arange(relevance.size), relevance, color="tab:blue")
    ax.set_xticks(np.arange(relevance.size), names, rotation=90, fontsize=7)
    ax.set_ylabel("relevance (share of the kernel's distance)")
    ax.set_title(title or "learned kernel widths")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
