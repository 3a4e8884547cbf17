"""Two more of LIBLINEAR's linear SVM solvers: the L1-regularized squared hinge by
coordinate descent, and Crammer and Singer's multi-class SVM by its dual.

- :func:`l1_svc_cd`: ``min_w ||w||_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2``, one
  coordinate at a time: a Newton step on the coordinate, then a backtracking line
  search (Yuan, Chang, Hsieh and Lin 2010, "A comparison of optimization methods and
  software for large-scale L1-regularized linear classification", section 4.1.2 as
  LIBLINEAR's ``solve_l1r_l2_svc`` runs it, with its shrinking of the coordinates
  that stay at zero).
- :func:`crammer_singer_cd`: ``min_W 1/2 ||W||^2 + sum_i C_i max_m (1[m != y_i] +
  w_m.x_i - w_{y_i}.x_i)``, one row's ``nr_class`` dual variables at a time, each
  sub-problem solved exactly by a sort (Keerthi, Sundararajan, Chang, Hsieh and Lin
  2008, "A sequential dual method for large scale multi-class linear SVMs", as
  LIBLINEAR's ``Solver_MCSVM_CS``, its shrinking included).

Both read the rows through sparse index arrays (a dense ``X`` is converted), as
LIBLINEAR does; the loops are numba, single-threaded (each step depends on the last).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

__all__ = ["l1_svc_cd", "crammer_singer_cd"]


def _with_bias(X, bias):
    """``X`` as CSR float64 with LIBLINEAR's constant column ``bias`` last (stored only
    where non-zero: a zero column's weight stays 0)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    X = sp.hstack([X, np.full((X.shape[0], 1), float(bias))], format="csr")
    X.eliminate_zeros()
    X.sum_duplicates()
    return X


@numba.njit(cache=True)
def _l1_loop(indptr, indices, values, y, C, eps, max_iter, seed):  # pragma: no cover
    n_features = len(indptr) - 1
    n = len(y)
    np.random.seed(seed)  # noqa: NPY002 (numba's own generator: the legacy API only)
    w = np.zeros(n_features)
    b = np.ones(n)
    xj_sq = np.zeros(n_features)
    yx = values.copy()  # y_i x_ij, column by column
    for j in range(n_features):
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            yx[p] = values[p] * y[i]
            xj_sq[j] += C[i] * yx[p] * yx[p]
    index = np.arange(n_features)
    active = n_features
    gmax_old = np.inf
    gnorm1_init = -1.0
    sigma = 0.01
    iteration = 0
    while iteration < max_iter:
        gmax_new = 0.0
        gnorm1_new = 0.0
        for j in range(active):
            k = j + np.random.randint(active - j)  # noqa: NPY002
            index[j], index[k] = index[k], index[j]
        s = 0
        while s < active:
            j = index[s]
            g_loss = 0.0
            h = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                if b[i] > 0:
                    tmp = C[i] * yx[p]
                    g_loss -= tmp * b[i]
                    h += tmp * yx[p]
            g_loss *= 2.0
            g = g_loss
            h = max(2.0 * h, 1e-12)
            gp, gn = g + 1.0, g - 1.0
            violation = 0.0
            if w[j] == 0.0:
                if gp < 0:
                    violation = -gp
                elif gn > 0:
                    violation = gn
                elif gp > gmax_old / n and gn < -gmax_old / n:
                    # zero, and likely to stay so: out of the active set until a check
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
            elif w[j] > 0:
                violation = abs(gp)
            else:
                violation = abs(gn)
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation
            if gp < h * w[j]:
                d = -gp / h
            elif gn > h * w[j]:
                d = -gn / h
            else:
                d = -w[j]
            if abs(d) < 1e-12:
                s += 1
                continue
            delta = abs(w[j] + d) - abs(w[j]) + g * d
            d_old = 0.0
            loss_old = 0.0
            searches = 0
            while searches < 20:
                d_diff = d_old - d
                cond = abs(w[j] + d) - abs(w[j]) - sigma * delta
                if xj_sq[j] * d * d + g_loss * d + cond <= 0:  # the bound suffices
                    for p in range(indptr[j], indptr[j + 1]):
                        b[indices[p]] += d_diff * yx[p]
                    break
                loss_new = 0.0
                for p in range(indptr[j], indptr[j + 1]):
                    i = indices[p]
                    if searches == 0 and b[i] > 0:
                        loss_old += C[i] * b[i] * b[i]
                    b[i] += d_diff * yx[p]
                    if b[i] > 0:
                        loss_new += C[i] * b[i] * b[i]
                if cond + loss_new - loss_old <= 0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                searches += 1
            w[j] += d
            if searches >= 20:  # rounding drift: b recomputed from w
                b[:] = 1.0
                for jj in range(n_features):
                    if w[jj] != 0.0:
                        for p in range(indptr[jj], indptr[jj + 1]):
                            b[indices[p]] -= w[jj] * yx[p]
            s += 1
        if iteration == 0:
            gnorm1_init = gnorm1_new
        iteration += 1
        if gnorm1_new <= eps * gnorm1_init:
            if active == n_features:
                break
            active = n_features  # converged on the active set: check them all
            gmax_old = np.inf
            continue
        gmax_old = gmax_new
    return w, iteration


def l1_svc_cd(X, y, C, *, bias=1.0, tol=1e-4, max_iter=1000, seed=0):
    """L1-regularized squared-hinge linear SVM (LIBLINEAR's ``-s 5``).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    C : ndarray of shape (n_samples,)
        Each row's penalty (``C`` times its class and sample weights).
    bias : float, default=1.0
        LIBLINEAR's constant feature (the intercept, regularized); 0 for none.
    tol : float, default=1e-4
        Stops when the violations' sum falls below ``tol * min(n+, n-) / n`` times
        the first pass's (LIBLINEAR's rule).
    max_iter : int, default=1000
        Passes over the coordinates.
    seed : int, default=0
        The coordinate order's random seed.

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
        The weights; the last multiplies ``bias`` (0 where ``bias`` is 0).
    n_iter : int
        Passes run.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [2.0, 0.1], [-1.0, 0.0], [-2.0, -0.1]])
    >>> w, n_iter = l1_svc_cd(X, np.array([1.0, 1.0, -1.0, -1.0]), np.ones(4))
    >>> bool(w[0] > 0), float(w[1])
    (True, 0.0)
    """
    y = np.asarray(y, dtype=np.float64)
    columns = _with_bias(X, bias).tocsc()
    columns.sort_indices()
    positives = int(np.sum(y > 0))
    eps = float(tol) * max(min(positives, len(y) - positives), 1) / len(y)
    w, n_iter = _l1_loop(columns.indptr.astype(np.int64), columns.indices.astype(np.int64),
                         columns.data, y, np.asarray(C, dtype=np.float64), eps,
                         int(max_iter), int(seed))
    return w, int(n_iter)


@numba.njit(cache=True)
def _sub_problem(a_i, yi, c_yi, active, B):  # pragma: no cover - compiled
    """The row's new dual variables (the first ``active`` of its permuted classes)."""
    D = B[:active].copy()
    if yi < active:
        D[yi] += a_i * c_yi
    D = -np.sort(-D)
    beta = D[0] - a_i * c_yi
    r = 1
    while r < active and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    alpha_new = np.empty(active)
    for m in range(active):
        if m == yi:
            alpha_new[m] = min(c_yi, (beta - B[m]) / a_i)
        else:
            alpha_new[m] = min(0.0, (beta - B[m]) / a_i)
    return alpha_new


@numba.njit(cache=True)
def _cs_loop(indptr, indices, values, y, n_classes, n_features, C, eps, max_iter,
             seed):  # pragma: no cover - compiled
    n = len(y)
    np.random.seed(seed)  # noqa: NPY002 (numba's own generator: the legacy API only)
    alpha = np.zeros((n, n_classes))
    w = np.zeros((n_features, n_classes))
    alpha_index = np.empty((n, n_classes), dtype=np.int64)
    for i in range(n):
        for m in range(n_classes):
            alpha_index[i, m] = m
    qd = np.zeros(n)
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            qd[i] += values[p] * values[p]
    active_i = np.full(n, n_classes, dtype=np.int64)
    y_index = y.copy()
    index = np.arange(n)
    active = n
    eps_shrink = max(10.0 * eps, 1.0)
    from_all = True
    G = np.empty(n_classes)
    B = np.empty(n_classes)
    iteration = 0
    while iteration < max_iter:
        stopping = -np.inf
        for i in range(active):
            k = i + np.random.randint(active - i)  # noqa: NPY002
            index[i], index[k] = index[k], index[i]
        s = 0
        while s < active:
            i = index[s]
            a_i = qd[i]
            if a_i <= 0:
                s += 1
                continue
            size = active_i[i]
            for m in range(size):
                G[m] = 1.0
            if y_index[i] < size:
                G[y_index[i]] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                f = indices[p]
                for m in range(size):
                    G[m] += w[f, alpha_index[i, m]] * values[p]
            min_g, max_g = np.inf, -np.inf
            for m in range(size):
                if alpha[i, alpha_index[i, m]] < 0 and G[m] < min_g:
                    min_g = G[m]
                if G[m] > max_g:
                    max_g = G[m]
            if y_index[i] < size and alpha[i, y[i]] < C[i] and G[y_index[i]] < min_g:
                min_g = G[y_index[i]]
            m = 0
            while m < active_i[i]:
                bound = C[i] if m == y_index[i] else 0.0
                if alpha[i, alpha_index[i, m]] == bound and G[m] < min_g:
                    active_i[i] -= 1
                    while active_i[i] > m:
                        last = active_i[i]
                        bound_last = C[i] if last == y_index[i] else 0.0
                        if not (alpha[i, alpha_index[i, last]] == bound_last
                                and G[last] < min_g):
                            alpha_index[i, m], alpha_index[i, last] = \
                                alpha_index[i, last], alpha_index[i, m]
                            G[m], G[last] = G[last], G[m]
                            if y_index[i] == last:
                                y_index[i] = m
                            elif y_index[i] == m:
                                y_index[i] = last
                            break
                        active_i[i] -= 1
                m += 1
            size = active_i[i]
            if size <= 1:
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            if max_g - min_g <= 1e-12:
                s += 1
                continue
            stopping = max(max_g - min_g, stopping)
            for m in range(size):
                B[m] = G[m] - a_i * alpha[i, alpha_index[i, m]]
            alpha_new = _sub_problem(a_i, y_index[i], C[i], size, B)
            for m in range(size):
                cls = alpha_index[i, m]
                d = alpha_new[m] - alpha[i, cls]
                alpha[i, cls] = alpha_new[m]
                if abs(d) >= 1e-12:
                    for p in range(indptr[i], indptr[i + 1]):
                        w[indices[p], cls] += d * values[p]
            s += 1
        iteration += 1
        if stopping < eps_shrink:
            if stopping < eps and from_all:
                break
            active = n  # converged on the active rows: every row and class again
            for i in range(n):
                active_i[i] = n_classes
            eps_shrink = max(eps_shrink / 2.0, eps)
            from_all = True
        else:
            from_all = False
    return w, iteration


def crammer_singer_cd(X, y, n_classes, C, *, bias=1.0, tol=1e-4, max_iter=1000, seed=0):
    """Crammer and Singer's multi-class linear SVM (LIBLINEAR's ``-s 4``).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int
    C : ndarray of shape (n_samples,)
        Each row's penalty (``C`` times its class and sample weights).
    bias : float, default=1.0
        LIBLINEAR's constant feature (the intercepts, regularized); 0 for none.
    tol : float, default=1e-4
        Stops when no row's dual gradients spread by more than ``tol`` (after a pass
        over every row, LIBLINEAR's rule).
    max_iter : int, default=1000
        Passes over the rows.
    seed : int, default=0
        The row order's random seed.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features + 1)
        One row of weights per class; the last column multiplies ``bias``.
    n_iter : int
        Passes run.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 0.0], [2.0, 0.0], [-1, -1], [-2, -2]])
    >>> W, _ = crammer_singer_cd(X, np.array([0, 0, 1, 1, 2, 2]), 3, np.ones(6))
    >>> (X @ W[:, :2].T + W[:, 2]).argmax(axis=1)
    array([0, 0, 1, 1, 2, 2])
    """
    rows = _with_bias(X, bias)
    rows.sort_indices()
    y = np.asarray(y, dtype=np.int64)
    W, n_iter = _cs_loop(rows.indptr.astype(np.int64), rows.indices.astype(np.int64),
                         rows.data, y, int(n_classes), rows.shape[1],
                         np.asarray(C, dtype=np.float64), float(tol), int(max_iter),
                         int(seed))
    return np.ascontiguousarray(W.T), int(n_iter)
