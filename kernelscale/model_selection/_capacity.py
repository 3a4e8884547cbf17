"""FALKON's capacity chosen by the time left: more centres while they score better.

The FALKON grid scores every (gamma, alpha) with few centres (its statistics cost
``n m^2`` per gamma). Once the best is known and refitted (that refit's time is
the cost model's measure), the time left buys centres: the winner is fitted
with twice the centres on the first fold's training rows and
scored on its held-out rows, and kept only if it scores better than the grid's
model did there; doubling goes on while the measured fit, its refit on every row
and the next doubling (predicted from the measured fits) fit the budget and
the ``m x m`` factors fit the memory budget. Past the centres whose ``K(X, C)``
the memory budget can keep, FALKON recomputes its kernel blocks at every
conjugate-gradient step: the first such doubling is predicted as the kept fits'
cost at its centres plus ``RECOMPUTE_STEPS`` builds of ``K(X, C)``, one block of
which is built and timed (:func:`recomputed_step_seconds`; then measured like the
others), so that at 1e6 rows the default budget's ~1,300 kept centres are exceeded
only where the time left pays for the recomputation. So the refitted model is one that was
scored, on one fold, and never one that scored worse than the grid's.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import get_scorer

from .._clock import now
from .._planner import falkon_plan
from ..kernels import make_kernel
from ._deadline import FALKON_CG_STEPS

__all__ = ["grow_centres", "fit_seconds", "kept_centres", "recomputed_step_seconds"]

#: how many centres at most (the m x m factorisations are O(m^3): 40,000 take
#: minutes on 2 cores)
MAX_GROWN_CENTRES = 40_000
#: a fit that recomputes K(X, C) builds it once per CG step instead of once: FALKON's
#: fits here take 10-20 steps (tol 1e-3; 16-18 at 1e6 rows of 28 features); the refit's
#: reserve prices them alike
RECOMPUTE_STEPS = FALKON_CG_STEPS
#: the entries of the kernel block a recomputed CG step is timed on (16 MiB in float32:
#: tens of milliseconds)
PROBE_ENTRIES = 2**22
#: the slowest growth the exact SVM's cost is predicted with. Small fits are dominated by
#: their overhead and measure ~n^1; at 1e5 rows (28 features, C = 10) fits of 1,500 to
#: 6,000 rows measured n^1.0 and predicted 2.9 s for the 80,000-row fold, which took
#: 18.2 s (n^1.71 from the 6,000-row fit) and its refit 34 s (3.6 s predicted)
EXACT_MIN_EXPONENT = 1.5


def kept_centres(n, d, memory_budget, itemsize=4, *, kept=True):
    """The most centres whose ``K(X, C)`` for ``n`` rows FALKON keeps within the budget
    (``kept=False``: whose fit fits it at all, recomputing the kernel blocks)."""
    lo, hi = 1, MAX_GROWN_CENTRES
    while lo < hi:
        m = (lo + hi + 1) // 2
        plan = falkon_plan("capacity", n=n, m=m, n_targets=1, itemsize=itemsize,
                           budget=memory_budget, block_row_bytes=itemsize * m + 8 * d)
        if plan.fits and (plan.choice == "kept" or not kept):
            lo = m
        else:
            hi = m - 1
    return lo


def grow_centres(make_model, X, y, sample_weight, fold, scored, *, m, scoring, task, end,
                 refit_seconds, memory_budget, log, fold_budget=None, itemsize=4,
                 max_m=None, on_kept=None, model_rows=None, step_seconds=None):
    """The number of centres to refit with: ``m`` or more, each step scored on ``fold``.

    Parameters
    ----------
    make_model : callable
        ``make_model(n_components)``: the winner's unfitted model.
    X, y, sample_weight : the search's data (the columns it scored on).
    fold : (train, test) index arrays
    scored : float
        The winner's score on this fold in the grid.
    m : int
        The grid's centres.
    scoring : str or None
        The search's scoring (None: accuracy / r2).
    task : {"classifier", "regressor"}
    end : float
        ``now()`` by which the refit must be done.
    refit_seconds : float
        The measured refit with ``m`` centres on every row.
    memory_budget : int
        The refit's.
    log : callable
        Receives one dict per step (``n_components``, ``score``, ``seconds``, ``kept``).
    fold_budget : int, default=None
        The fold fits' budget (``memory_budget`` less the fold's copy of its rows);
        None: ``memory_budget``.
    itemsize : int, default=4
        Bytes of the kernel dtype the model fits in (8: float64).
    max_m : int, default=None
        The most centres worth trying (local models: their largest leaf's rows).
    on_kept : callable, default=None
        Receives each kept step's model, fitted on the fold's training rows, and the
        seconds its fit took (the average of local models scores with them).
    model_rows : int, default=None
        The rows of the largest single FALKON fit among the fold's (local models: its
        largest leaf's; each leaf holds its own ``K(X, C)``, one at a time); None: the
        fold's training rows. The refit's, ``n / len(train)`` times as many.
    step_seconds : callable, default=None
        ``step_seconds(n_components, rows)``: the seconds of one CG step of a fit that
        recomputes ``K(X, C)`` for ``rows`` rows; None: :func:`recomputed_step_seconds`
        on ``make_model(n_components)``'s kernel.

    Returns
    -------
    n_components : int
    """
    scorer = get_scorer(scoring or ("accuracy" if task == "classifier" else "r2"))
    train, test = fold
    n, d = X.shape
    growth = n / train.size
    # both fits must keep K(X, C) to be priced as kept: the refit (every row, the whole
    # budget) and the fold's (its training rows, the budget less the fold's copy), in the
    # model's dtype (a float64 fit holds twice the bytes)
    fold_budget = memory_budget if fold_budget is None else fold_budget
    fold_rows = train.size if model_rows is None else int(model_rows)
    refit_rows = n if model_rows is None else min(n, int(np.ceil(model_rows * growth)))
    refit_held = kept_centres(refit_rows, d, memory_budget, itemsize)
    fold_held = kept_centres(fold_rows, d, fold_budget, itemsize)
    held = min(refit_held, fold_held)
    cap = min(train.size, kept_centres(refit_rows, d, memory_budget, itemsize, kept=False),
              kept_centres(fold_rows, d, fold_budget, itemsize, kept=False),
              train.size if max_m is None else max_m)
    if step_seconds is None:
        def step_seconds(centres, rows):
            return recomputed_step_seconds(make_model(centres), X, rows, centres,
                                           itemsize=itemsize)
    best_m, best_score = m, scored
    # fits measured: (centres, seconds of a fold's fit, whether it kept K(X, C)), the
    # first from the refit
    measured = [(m, refit_seconds / growth, m <= refit_held)]
    while 2 * best_m <= cap:
        nxt = 2 * best_m
        # the fold's fit and the refit on every row (growth times its rows), from the
        # fits measured alike; the first past the kept kernel is the kept fits' cost at
        # nxt centres plus its blocks built at every CG step, one block timed (at 1e6
        # rows, 2,000 centres: 40-47 s a fit, where 20x the kept fit's linear part had
        # predicted 228 s and no doubling was tried with 352 s left); local models: every
        # leaf's blocks, the fold's training rows
        last_kept = measured[-1][2]
        predicted = fit_seconds([(c, t) for c, t, k in measured if k == last_kept], nxt)
        if nxt > held and last_kept:
            predicted += RECOMPUTE_STEPS * step_seconds(nxt, train.size)
        predicted *= 1.0 + growth
        if now() + predicted > end:
            break
        began = now()
        model = make_model(nxt)
        weights = None if sample_weight is None else sample_weight[train]
        model.fit(X[train], y[train], sample_weight=weights)
        score = float(scorer(model, X[test], y[test]))
        seconds = now() - began
        kept = bool(np.isfinite(score) and score > best_score)
        log({"n_components": nxt, "score": score, "seconds": seconds, "kept": kept})
        if not kept:
            break
        best_m, best_score = nxt, score
        if on_kept is not None:
            on_kept(model, seconds)
        measured.append((nxt, seconds, nxt <= fold_held))
    return best_m


def fit_seconds(measured, m):
    """A FALKON fit's seconds with ``m`` centres, from the fits ``measured``.

    Its cost is ``a m`` (the kernel blocks and CG: n m per pass) plus ``b m^3`` (the
    m x m factorisations), so each doubling costs 2x to 8x the last. From one
    measurement the cost is taken as linear (the grid's centres, where the cubic
    term is small); from two, ``a`` and ``b`` are solved from the last two (b >= 0),
    and the prediction is at least twice the last fit.

    Examples
    --------
    >>> fit_seconds([(1000, 2.0)], 2000)
    4.0
    >>> round(fit_seconds([(1000, 2.0), (2000, 8.0)], 4000), 1)  # mostly cubic
    48.0
    """
    m1, t1 = measured[-1]
    if len(measured) < 2:
        return t1 * m / m1
    m0, t0 = measured[-2]
    # t = a m + b m^3 through both points
    b = max(0.0, (t1 * m0 - t0 * m1) / (m1**3 * m0 - m0**3 * m1))
    a = max(0.0, (t1 - b * m1**3) / m1)
    return max(t1 * m / m1, a * m + b * m**3)


def recomputed_step_seconds(model, X, rows, m, *, itemsize=4, random_state=0):
    """The seconds of one conjugate-gradient step of a FALKON fit that recomputes
    ``K(X, C)`` for ``rows`` rows and ``m`` centres: a block of at most
    ``PROBE_ENTRIES`` entries of ``model``'s kernel built and applied (``K^T (K v)``),
    best of two, scaled to the rows.

    Parameters
    ----------
    model : estimator
        The unfitted FALKON model (or local models, whose ``estimator`` is one); its
        ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``kernel_params`` are built.
    X : {ndarray, sparse matrix}
        Rows the block and the centres are drawn from.
    rows, m : int
    itemsize : int, default=4
        Bytes of the kernel dtype.

    Returns
    -------
    seconds : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import NystromKernelRidge
    >>> X = np.random.default_rng(0).normal(size=(2000, 8))
    >>> recomputed_step_seconds(NystromKernelRidge(), X, 100_000, 500) > 0
    True
    """
    model = getattr(model, "estimator", None) or model  # local models: each leaf's
    rng = np.random.RandomState(random_state)
    n = X.shape[0]
    block = int(min(n, max(1, PROBE_ENTRIES // m)))
    centres = X[np.sort(rng.choice(n, min(m, n), replace=False))]
    Xb = X[np.sort(rng.choice(n, block, replace=False))]
    kernel = make_kernel(model.kernel, Xb, gamma=model.gamma, degree=model.degree,
                         coef0=model.coef0, kernel_params=model.kernel_params)
    dtype = np.float32 if itemsize == 4 else np.float64
    prepared = kernel.prepare(centres, dtype)
    out = np.empty((block, centres.shape[0]), dtype=dtype)
    v = np.ones(centres.shape[0], dtype=dtype)
    best = np.inf
    for _ in range(2):  # the first may pay for compilation and cold caches
        began = now()
        prepared.evaluate_rows(Xb, 0, block, out)
        out.T @ (out @ v)  # the step's product K^T (K v) on the block
        best = min(best, now() - began)
    return best * (rows / block) * (m / centres.shape[0])


def exact_challenger(make_svc, X, y, sample_weight, fold, scored, *, scoring, task, end, seed,
                     log):
    """Whether the exact SVM at its defaults beats the search's winner on ``fold``.

    Beyond the rows where the family rule searches it, the exact SVM is often the
    more accurate model, and a single fit at its defaults may cost little. Its cost
    is measured, not assumed: fits on subsamples of the fold's training rows,
    doubling up to an eighth of them, give the exponent of its growth (taken between
    ``EXACT_MIN_EXPONENT`` and 2.5), which predicts the fold's fit and the refit on every row;
    only if both end within the budget is it fitted on the fold and scored on its
    held-out rows.

    Returns
    -------
    won : bool
    """
    scorer = get_scorer(scoring or ("accuracy" if task == "classifier" else "r2"))
    train, test = fold
    n, n_t = X.shape[0], train.size
    rng = np.random.RandomState(seed)
    # subsamples doubling from 1,500 rows up to an eighth of the fold: the growth of a small
    # fit is its overhead's (n^1 at 3,000 rows, n^2 beyond); each fit's exponent, from the
    # last two, predicts the fold's fit, and the measuring stops once that is past the time
    # left (at 1e6 rows, n^1 from 3,000 rows predicted 80 s for an hours-long fit)
    sizes, times, exponent = [], [], 2.0
    size = min(n_t, 1500)
    while True:
        rows = np.sort(rng.choice(train, size, replace=False))
        began = now()
        make_svc().fit(X[rows], y[rows])
        sizes.append(size)
        times.append(now() - began)
        if len(sizes) >= 2 and times[-2] > 0:
            exponent = float(np.clip(np.log(times[-1] / times[-2])
                                     / np.log(sizes[-1] / sizes[-2]), EXACT_MIN_EXPONENT, 2.5))
        fold_s = times[-1] * (n_t / size) ** exponent
        refit_s = fold_s * (n / n_t) ** exponent
        late = len(sizes) >= 2 and now() + fold_s + refit_s > end
        if late or 2 * size > max(n_t // 8, 3000) or size >= n_t:
            break
        size = min(n_t, 2 * size)
    step = {"predicted_fold_s": fold_s, "predicted_refit_s": refit_s, "exponent": exponent,
            "measured_rows": sizes,
            "score": None, "seconds": None, "won": False}
    if now() + fold_s + refit_s <= end:
        began = now()
        weights = None if sample_weight is None else sample_weight[train]
        model = make_svc().fit(X[train], y[train], sample_weight=weights)
        step["score"] = float(scorer(model, X[test], y[test]))
        step["seconds"] = now() - began
        step["won"] = bool(step["score"] > scored)
    log(step)
    return step["won"]
