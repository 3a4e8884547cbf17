"""Dual coordinate descent for linear epsilon-SVR (Ho & Lin 2012; LIBLINEAR's solvers 12, 13).

Solves the dual of ``min_w 1/2 ||w||^2 + sum_i C_i loss(y_i - w . x_i)`` with the
epsilon-insensitive loss ``max(0, |r| - eps)`` (L1) or its square (L2):

    min_b 1/2 b^T (X X^T + D) b - y^T b + eps ||b||_1,   -U_i <= b_i <= U_i

(``U_i = C_i, D_ii = 0`` for L1; ``U_i = inf, D_ii = 1 / (2 C_i)`` for L2),
keeping ``w = X^T b`` up to date. Each coordinate takes the exact minimiser of
its one-dimensional piecewise-quadratic objective. The intercept is the weight
of a constant feature ``bias``, regularized like the others (LIBLINEAR's and
scikit-learn's ``LinearSVR``'s convention). Stops, as LIBLINEAR does, when the
summed violation of a pass falls below ``tol`` times that of the first pass.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["dual_cd_svr", "svr_primal_objective"]


@numba.njit(cache=True)
def _diagonal(X, C, squared, bias):  # pragma: no cover
    n, d = X.shape
    lam = np.zeros(n)
    upper = np.empty(n)
    QD = np.empty(n)
    for i in range(n):
        if squared:
            lam[i] = 0.5 / C[i] if C[i] > 0 else np.inf
            upper[i] = np.inf if C[i] > 0 else 0.0
        else:
            upper[i] = C[i]
        s = bias * bias + lam[i] if np.isfinite(lam[i]) else np.inf
        for k in range(d):
            s += X[i, k] * X[i, k]
        QD[i] = s
    return lam, upper, QD


# the loop's state between calls: passes done, active coordinates, the last pass's
# largest violation, the first pass's summed violation, the last pass's
_IT, _ACTIVE, _G_MAX_OLD, _FIRST, _TOTAL = range(5)


@numba.njit(cache=True)
def _passes(X, y, epsilon, bias, lam, upper, QD, beta, w, index, state, stop_at, tol,
            seed):  # pragma: no cover
    """Passes until convergence or ``stop_at`` passes in all; resumable from ``state``
    (numba's generator is seeded on the first pass only, so that a fit run a pass per
    call, to report progress, visits the coordinates in the same order as one call)."""
    n, d = X.shape
    start = int(state[_IT])
    if start == 0:
        np.random.seed(seed)  # noqa: NPY002 - numba seeds its own generator here
    active = int(state[_ACTIVE])
    g_max_old = state[_G_MAX_OLD]
    first = state[_FIRST]
    for it in range(start, stop_at):
        for s in range(active - 1):  # Fisher-Yates over the active coordinates
            t = s + np.random.randint(active - s)  # noqa: NPY002
            index[s], index[t] = index[t], index[s]
        total = 0.0
        g_max = 0.0
        s = 0
        while s < active:
            i = index[s]
            if upper[i] == 0.0 or not np.isfinite(QD[i]):
                s += 1
                continue
            g = bias * w[d]
            for k in range(d):
                g += w[k] * X[i, k]
            G = g - y[i] + lam[i] * beta[i]
            H = QD[i]
            Gp = G + epsilon
            Gn = G - epsilon
            b = beta[i]
            v = 0.0
            shrink = False
            # LIBLINEAR's shrinking: a coordinate at a bound whose gradient pushes it
            # further out by more than the last pass's largest violation is set aside
            if b == 0.0:
                if Gp < 0.0:
                    v = -Gp
                elif Gn > 0.0:
                    v = Gn
                elif Gp > g_max_old and Gn < -g_max_old:
                    shrink = True
            elif b >= upper[i]:
                if Gp > 0.0:
                    v = Gp
                elif Gp < -g_max_old:
                    shrink = True
            elif b <= -upper[i]:
                if Gn < 0.0:
                    v = -Gn
                elif Gn > g_max_old:
                    shrink = True
            elif b > 0.0:
                v = abs(Gp)
            else:
                v = abs(Gn)
            if shrink:
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            s += 1
            g_max = max(g_max, v)
            total += v
            if v == 0.0 or H <= 0.0:
                continue
            if Gp < H * b:
                step = -Gp / H
            elif Gn > H * b:
                step = -Gn / H
            else:
                step = -b
            new = min(max(b + step, -upper[i]), upper[i])
            delta = new - b
            if delta != 0.0:
                beta[i] = new
                for k in range(d):
                    w[k] += delta * X[i, k]
                w[d] += delta * bias
        if first < 0.0:
            first = total
        state[_IT] = it + 1
        state[_FIRST] = first
        state[_TOTAL] = total
        if total <= tol * first:
            if active == n:
                state[_ACTIVE] = active
                return True
            # converged on the active set: check every coordinate once more
            active = n
            g_max_old = np.inf
        else:
            g_max_old = g_max
        state[_ACTIVE] = active
        state[_G_MAX_OLD] = g_max_old
    return False


def dual_cd_svr(X, y, C, epsilon, *, loss="epsilon_insensitive", bias=1.0, tol=1e-4,
                max_iter=1000, random_state=0, monitor=None):
    """Fit a linear epsilon-SVR by dual coordinate descent.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Dense features (float32 or float64, read as they are; sums in float64).
    y : ndarray of shape (n,)
    C : ndarray of shape (n,)
        Per-sample penalty (``C`` times the sample weight).
    epsilon : float
        Half-width of the insensitive tube (>= 0).
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}
    bias : float, default=1.0
        Value of the constant feature whose weight is the intercept; 0: no intercept.
    tol : float, default=1e-4
    max_iter : int, default=1000
        Passes over the data.
    random_state : int, default=0
        Seeds the coordinate order.
    monitor : callable, default=None
        Called after each pass as ``monitor(n_passes, violation, n_active)``, the
        violation relative to the first pass's (the fit stops below ``tol``). The
        outcome is the same with or without it.

    Returns
    -------
    coef : ndarray of shape (d,)
    intercept : float
    n_iter : int
    converged : bool

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-1, 1, 50).reshape(-1, 1)
    >>> coef, b, _, ok = dual_cd_svr(X, 2 * X.ravel() + 0.5, np.full(50, 100.0), 0.01,
    ...                              tol=1e-3)
    >>> round(float(coef[0]), 2), round(b, 2), ok
    (1.99, 0.5, True)
    """
    # float32 features are read as they are (never copied to float64: an n x D copy
    # was 6 GB at 193k x 4000); products and sums are float64 either way
    X = np.ascontiguousarray(X, dtype=X.dtype if X.dtype in (np.float32, np.float64)
                             else np.float64)
    n, d = X.shape
    beta = np.zeros(n)
    w = np.zeros(d + 1)
    y = np.asarray(y, dtype=np.float64)
    lam, upper, QD = _diagonal(X, np.asarray(C, dtype=np.float64),
                               loss == "squared_epsilon_insensitive", float(bias))
    index = np.arange(n)
    state = np.array([0.0, n, np.inf, -1.0, np.inf])
    args = (X, y, float(epsilon), float(bias), lam, upper, QD, beta, w, index, state)
    max_iter, tol, seed = int(max_iter), float(tol), int(random_state)
    if monitor is None:
        converged = _passes(*args, max_iter, tol, seed)
    else:
        converged = False
        while not converged and state[_IT] < max_iter:
            converged = _passes(*args, int(state[_IT]) + 1, tol, seed)
            first = state[_FIRST]
            monitor(int(state[_IT]), state[_TOTAL] / first if first > 0 else 0.0,
                    int(state[_ACTIVE]))
    return w[:d], float(w[d] * bias), int(state[_IT]), bool(converged)


def svr_primal_objective(coef, intercept, X, y, C, epsilon, *, loss="epsilon_insensitive",
                         bias=1.0):
    """``1/2 (||w||^2 + (b / bias)^2) + sum_i C_i loss(y_i - w . x_i - b)`` (the intercept
    regularized as :func:`dual_cd_svr` does; not at all for ``bias=0``)."""
    r = np.abs(np.asarray(y) - X @ coef - intercept) - epsilon
    r = np.maximum(r, 0.0)
    data = r ** 2 if loss == "squared_epsilon_insensitive" else r
    reg = coef @ coef + ((intercept / bias) ** 2 if bias else 0.0)
    return float(0.5 * reg + np.asarray(C) @ data)
