"""The learned kernel widths and metric as text and as bar charts (``kernelscale tune``)."""

from __future__ import annotations

import numpy as np

__all__ = ["widths_lines", "draw_widths", "metric_lines", "draw_metric"]


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


def _combination(direction, names, top=4):
    """``+0.71 a - 0.70 b`` from a direction's largest weights."""
    order = np.argsort(np.abs(direction))[::-1][:top]
    terms = [f"{'-' if direction[j] < 0 else '+'}{abs(direction[j]):.2f} {names[j]}"
             for j in order if abs(direction[j]) >= 0.05]
    return " ".join(terms).lstrip("+")


def metric_lines(metric, names=None, top=10, directions=3):
    """Printable lines of a learned metric (:class:`KernelMetric`): its rounds, the features
    by relevance, and its top directions as combinations of the standardised features.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> m = SimpleNamespace(feature_relevance_=np.array([0.5, 0.5, 0.0]), n_iter_=2,
    ...                     best_round_=2, initial_loss_=0.9, loss_=0.3,
    ...                     directions_=np.array([[0.71, -0.70, 0.0]]),
    ...                     direction_shares_=np.array([0.97]))
    >>> metric_lines(m)[-1]
    '  direction 1 (97% of the distance): 0.71 x0 -0.70 x1'
    """
    relevance = metric.feature_relevance_
    names = names or [f"x{j}" for j in range(relevance.size)]
    order = np.argsort(relevance)[::-1]
    lines = [f"kernel metric learned by AGOP in {metric.n_iter_} rounds (kept round "
             f"{metric.best_round_}; held-out loss {metric.initial_loss_:.4g} -> "
             f"{metric.loss_:.4g}), features by relevance:"]
    width = max([12] + [len(names[j]) for j in order[:top]])
    for j in order[:top]:
        lines.append(f"  {names[j]:<{width}s} relevance {relevance[j]:.4f}")
    if order.size > top:
        rest = order[top:]
        lines.append(f"  ... {rest.size} more, relevance {relevance[rest].sum():.4f} together")
    lines.append("its top directions (over the standardised features):")
    for k, (direction, share) in enumerate(zip(metric.directions_[:directions],
                                               metric.direction_shares_[:directions])):
        lines.append(f"  direction {k + 1} ({share:.0%} of the distance): "
                     f"{_combination(direction, names)}")
    return lines


def draw_metric(metric, path, names=None, title=None, directions=3):
    """Write a PNG: every feature's relevance, and the weights of the metric's top
    directions over the standardised features."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    relevance = metric.feature_relevance_
    names = names or [f"x{j}" for j in range(relevance.size)]
    shown = metric.directions_[:directions]
    fig, axes = plt.subplots(1 + len(shown), 1, sharex=True,
                             figsize=(max(5.0, 0.28 * relevance.size + 2),
                                      2.4 * (1 + len(shown))), squeeze=False)
    axes = axes[:, 0]
    axes[0].bar(np.arange(relevance.size), relevance, color="tab:blue")
    axes[0].set_ylabel("relevance")
    axes[0].set_title(title or "learned kernel metric")
    for ax, direction, share in zip(axes[1:], shown, metric.direction_shares_):
        ax.bar(np.arange(relevance.size), direction,
               color=np.where(direction >= 0, "tab:green", "tab:red"))
        ax.axhline(0.0, color="black", linewidth=0.5)
        ax.set_ylabel(f"direction ({share:.0%})")
    axes[-1].set_xticks(np.arange(relevance.size), names, rotation=90, fontsize=7)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
