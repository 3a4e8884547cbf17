"""Feature-map SVMs over a (gamma, C) grid: the map's expensive part once, a linear SVM
path per fold.

The models are :class:`kernelscale.ApproxKernelSVC` (LIBLINEAR's squared-hinge
SVM) on one of two maps, whose gamma-free part is computed once for the grid:

- ``"nystrom-svm"``: an eigendecomposed Nystroem map (``K_mm^{-1/2}``
  restricted to its numerically non-null part), ``z(x) = K_mm^{-1/2} k(L, x)``.
  The landmarks are drawn once, uniformly, by ``random_state``, as the refitted
  model's :class:`kernelscale.feature_maps.Nystroem` draws them, and the
  squared distances of every row to them are kept: each gamma is one
  elementwise exp and one product with the whitening of ``K_mm`` (one
  eigendecomposition per gamma).
- ``"rff-svm"``: random Fourier features ``sqrt(2 / D) cos(sqrt(2 gamma) x W0
  + b)`` with the standard-normal draw ``W0`` and the phases ``b`` that the
  refitted :class:`kernelscale.feature_maps.RandomFourierFeatures` draws from
  the same ``random_state``: the projections ``X W0`` are one GEMM for the
  grid, each gamma one rescaling and one cosine.

Both then share the features of all rows (a fold's training and validation
features are rows of them, never recomputed) and, along increasing ``C``, each
fold's solution starts the next (Newton / L-BFGS warm start), so a path costs
little more than its last point.
"""

from __future__ import annotations

import numpy as np

from ..feature_maps import select_landmarks
from ..kernels import RBF
from ..models.linear import fit_linear_svm
from ..solvers import base_weights
from ._least_squares import whitening
from ._runner import add_score, run_units
from ._schedule import Stopwatch

__all__ = ["nystrom_svm_grid", "nystrom_svm_solver", "NYSTROM_RCOND", "rff_svm_grid"]

# the grid's timings are differences of this stopwatch's readings (the scheduler's clock)
_watch = Stopwatch()

#: Relative eigenvalue cutoff of ``K_mm``: the search's and the refitted map's.
NYSTROM_RCOND = 1e-12


def nystrom_svm_solver(n_components):
    """The linear solver of the search and of its refit: Newton (exact in a few steps,
    and warm-started along C) up to 4,096 features, L-BFGS above.

    ``solver="auto"`` would pick dual coordinate descent for folds with fewer
    rows than a few times the features, which needs thousands of passes at a
    large C and cannot start from another C's solution.
    """
    return "newton" if n_components <= 4096 else "lbfgs"


def nystrom_svm_grid(X, y_index, classes, sample_weight, folds, *, gamma_ref, factors, Cs,
                     n_components, class_weight, random_state, score, memory_budget,
                     n_jobs=1, deadline=None, on_unit=None):
    """Cross-validated scores of the Nystrom SVM (RBF) for every (gamma, C) of the grid.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, n_features)
    y_index : ndarray of shape (n,)
        Class index of each row (into ``classes``).
    classes : ndarray of shape (n_classes,)
    sample_weight : ndarray of shape (n,)
    folds : list of (train, validation) index arrays
    gamma_ref : float
        gamma = ``gamma_ref * factor``.
    factors, Cs : sequences of float
    n_components : int
        Landmarks, drawn uniformly by ``random_state``.
    class_weight : as :class:`kernelscale.ApproxKernelSVC`'s.
    random_state : int
    score : callable
        ``score(fold_index, decision_values)`` of the fold's validation rows.
    memory_budget : int
    n_jobs : int, default=1
        Threads of the linear solvers (one-vs-rest problems side by side).
    deadline, on_unit : as :func:`kernelscale.model_selection._exact.exact_svm_grid`'s.

    Returns
    -------
    records : list of dict
        ``gamma``, ``C``, ``n_components``, ``scores``, ``fit_times``,
        ``score_times`` per fold.
    complete : bool
    """
    kernel = RBF(gamma_ref)
    start = _watch()
    rng = np.random.RandomState(random_state)
    landmarks, _ = select_landmarks(X, n_components, "uniform", rng, kernel=kernel,
                                    memory_budget=memory_budget)
    # float64 as the map's own blocks when K_mm is ill-conditioned: the whitening
    # multiplies the kernel's rounding by up to 1/sqrt(rcond); only Z is float32
    rows = 256  # the kernel is made and whitened this many rows at a time
    block = 2 * 8 * rows * landmarks.shape[0]
    D_nm = kernel.distances(X, landmarks, dtype=np.float64, memory_budget=block)
    D_mm = kernel.distances(landmarks, dtype=np.float64, memory_budget=block)
    Z = np.empty(D_nm.shape, dtype=np.float32)

    def features(factor):
        # the cutoff of Nystroem(decomposition="eigh"): against the unit diagonal
        basis = whitening(kernel.from_distances(D_mm, factor), NYSTROM_RCOND, scale=1.0)
        width = basis.shape[1]
        for lo in range(0, D_nm.shape[0], rows):
            K = kernel.from_distances(D_nm[lo:lo + rows], factor)
            Z[lo:lo + rows, :width] = K @ basis
        return Z[:, :width]
    return _feature_svm_grid(
        features, _watch() - start, y_index, classes, sample_weight, folds,
        gamma_ref=gamma_ref, factors=factors, Cs=Cs, n_components=n_components,
        class_weight=class_weight, random_state=random_state, score=score,
        memory_budget=memory_budget, n_jobs=n_jobs, deadline=deadline, on_unit=on_unit)


def rff_svm_grid(X, y_index, classes, sample_weight, folds, *, gamma_ref, factors, Cs,
                 n_components, class_weight, random_state, score, memory_budget, n_jobs=1,
                 deadline=None, on_unit=None):
    """Cross-validated scores of the random-Fourier-feature SVM (RBF) over the grid.

    Parameters and returns are :func:`nystrom_svm_grid`'s; ``n_components`` is
    the number of features ``D`` (random-phase cosines).
    """
    start = _watch()
    rng = np.random.RandomState(random_state)
    # RandomFourierFeatures(kind="cos", sampling="iid") draws in this order
    W0 = rng.standard_normal((X.shape[1], n_components))
    offset = rng.uniform(0.0, 2.0 * np.pi, size=n_components).astype(np.float32)
    projection = np.asarray(X @ W0, dtype=np.float32)
    Z = np.empty_like(projection)
    scale = np.float32(np.sqrt(2.0 / n_components))

    def features(factor):
        np.multiply(projection, np.float32(np.sqrt(2.0 * gamma_ref * factor)), out=Z)
        np.add(Z, offset, out=Z)
        np.cos(Z, out=Z)
        return np.multiply(Z, scale, out=Z)
    return _feature_svm_grid(
        features, _watch() - start, y_index, classes, sample_weight, folds,
        gamma_ref=gamma_ref, factors=factors, Cs=Cs, n_components=n_components,
        class_weight=class_weight, random_state=random_state, score=score,
        memory_budget=memory_budget, n_jobs=n_jobs, deadline=deadline, on_unit=on_unit)


def _feature_svm_grid(features, shared_s, y_index, classes, sample_weight, folds, *,
                      gamma_ref, factors, Cs, n_components, class_weight, random_state,
                      score, memory_budget, n_jobs, deadline, on_unit):
    """The grid over ``features(factor)`` (all rows, float32): a warm path per fold."""
    Cs = np.sort(np.asarray(Cs, dtype=np.float64))
    shared = shared_s / (len(factors) * len(Cs) * len(folds))
    fold_data = []
    for train, _ in folds:
        weights, balanced = base_weights(class_weight, classes, y_index[train],
                                         sample_weight[train])
        fold_data.append((train, weights, balanced))

    def unit(factor):
        per_C = [{"gamma": gamma_ref * factor, "C": float(C), "n_components": int(n_components),
                  "scores": [], "fit_times": [], "score_times": []} for C in Cs]
        t0 = _watch()
        Z = features(factor)
        common = (_watch() - t0) / (len(Cs) * len(folds))
        for f, (train, weights, balanced) in enumerate(fold_data):
            Z_train, Z_val = Z[train], Z[folds[f][1]]
            previous = None
            for record, C in zip(per_C, Cs):
                t0 = _watch()
                # tol 1e-6: a warm start can meet Newton's relative gradient test
                # (1e-4) short of the exact minimiser that a cold fit reaches when its
                # active set settles (decision values off by up to 1e-2 at C = 10)
                coef, intercept, _ = fit_linear_svm(
                    Z_train, y_index[train], len(classes), weights, balanced, C=float(C),
                    loss="squared_hinge", solver=nystrom_svm_solver(n_components), bias=1.0,
                    tol=1e-6, max_iter=1000, n_jobs=n_jobs, memory_budget=memory_budget,
                    seed=random_state, name="ApproxKernelSVC", warm_start=previous)
                previous = (coef, intercept)
                t1 = _watch()
                add_score(record, score(f, Z_val @ coef.T + intercept))
                record["score_times"].append(_watch() - t1)
                record["fit_times"].append(shared + common + t1 - t0)
        return per_C
    return run_units(factors, unit, deadline=deadline, on_unit=on_unit,
                     what="the feature-map SVM grid")
