"""The heatmap of a search's CV scores over (gamma, C or alpha), one panel per family."""

from __future__ import annotations

import numpy as np

__all__ = ["score_grids", "draw_heatmap"]


def score_grids(results):
    """``{family: (gammas, penalties, penalty_name, scores)}`` from ``cv_results_``.

    ``scores[i, j]`` is the mean CV score at ``gammas[i]``, ``penalties[j]``
    (NaN where the search did not reach; with several sizes, the best size's).
    """
    grids = {}
    for family in dict.fromkeys(p["family"] for p in results["params"]):
        rows = [i for i, p in enumerate(results["params"]) if p["family"] == family]
        name = "C" if "C" in results["params"][rows[0]] else "alpha"
        gammas = np.unique([results["params"][i]["gamma"] for i in rows])
        penalties = np.unique([results["params"][i][name] for i in rows])
        scores = np.full((gammas.size, penalties.size), np.nan)
        for i in rows:
            p = results["params"][i]
            g, c = np.searchsorted(gammas, p["gamma"]), np.searchsorted(penalties, p[name])
            scores[g, c] = np.fmax(scores[g, c], results["mean_test_score"][i])
        grids[family] = gammas, penalties, name, scores
    return grids


def draw_heatmap(results, path, *, scoring="accuracy", title=None):
    """Write a PNG: CV score over log gamma (rows) x log C or alpha (columns) per family.

    The colour scale is shared by the panels, each cell is labelled with its
    score, and the best cell of each panel is outlined (the overall best in red).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grids = score_grids(results)
    finite = np.concatenate([g[3][np.isfinite(g[3])] for g in grids.values()])
    low, high = float(finite.min()), float(finite.max())
    best_overall = results["params"][int(np.argmin(results["rank_test_score"]))]
    fig, axes = plt.subplots(1, len(grids), figsize=(5.2 * len(grids) + 1, 4.6), squeeze=False)
    image = None
    for ax, (family, (gammas, penalties, name, scores)) in zip(axes[0], grids.items()):
        image = ax.imshow(scores, origin="lower", cmap="viridis", vmin=low, vmax=high,
                          aspect="auto")
        ax.set_xticks(range(penalties.size), [f"{v:.3g}" for v in penalties], rotation=45)
        ax.set_yticks(range(gammas.size), [f"{v:.3g}" for v in gammas])
        ax.set_xlabel(f"{name} (log scale)")
        ax.set_ylabel("gamma (log scale)")
        ax.set_title(family)
        for (i, j), value in np.ndenumerate(scores):
            if np.isfinite(value):
                dark = value < low + 0.6 * (high - low)
                ax.text(j, i, f"{value:.3f}"[1:] if 0 <= value < 1 else f"{value:.2g}",
                        ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
        if np.isfinite(scores).any():
            i, j = np.unravel_index(np.nanargmax(scores), scores.shape)
            overall = best_overall["family"] == family
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, linewidth=2.5,
                                       edgecolor="red" if overall else "white"))
    fig.colorbar(image, ax=list(axes[0]), label=f"mean CV {scoring}")
    fig.suptitle(title or f"cross-validated {scoring} (best outlined in red)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
