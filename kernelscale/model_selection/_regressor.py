"""``KernelRegressorCV``: the most accurate kernel regressor for the data."""

from __future__ import annotations

from sklearn.base import RegressorMixin

from .._constraints import Options
from ._search import KernelSearch
from ._space import (
    check_grid,
    default_alphas,
    wants_log_target,
)

__all__ = ["KernelRegressorCV"]


class KernelRegressorCV(RegressorMixin, KernelSearch):
    """The most accurate kernel regressor for the data, by a search that shares its work.

    Nystrom kernel ridge (FALKON's model) over (gamma, alpha): fold statistics
    merged (a fold's = the total minus its own), one eigendecomposition per
    gamma serving every fold and alpha; the best is refitted as
    :class:`kernelscale.NystromKernelRidge`.

    Parameters
    ----------
    families : "auto", str or list of str, default="auto"
        Model families to search: "falkon" (NystromKernelRidge). "auto" chooses from the data's
        shape and the memory budget (see ``family_choice_``).
    gamma_factors : list of float, default=None
        gamma = ``gamma_scale * factor``, ``gamma_scale = 1 / (n_features X.var())``
        (scikit-learn's "scale"); None means 2^-3 .. 2^3 (7 values).
    alphas : list of float, default=None
        Ridge penalties (absolute, as ``NystromKernelRidge``'s ``alpha``);
        None means ``n * 10^-7 .. n * 10^-1``.
    n_components : int, default=None
        Centres of the FALKON family and landmarks of the Nystrom SVM family;
        None: FALKON's automatic number, at most 1000 while searching (their
        statistics / Newton Hessians cost n m^2 per gamma).
    cv : int or cross-validation splitter, default=5
        An int is folds (KFold), shuffled by ``random_state``; rows in an order of
        their own (consecutive rows nearer than random pairs, as rows in time order
        are, and not sorted by ``y``) get contiguous blocks instead (scikit-learn's
        unshuffled folds), which ``family_choice_`` says.
    scoring : str, default=None
        "r2" (None), "neg_mean_squared_error", "neg_root_mean_squared_error" or
        "neg_mean_absolute_error".
    halving : bool or "auto", default="auto"
        Successive halving over gamma: every gamma (with its whole C / alpha
        path) is screened on a stratified subsample of ``n / 3^k`` rows, the
        best third goes on to three times the rows, and only the survivors
        are cross-validated on all rows (``cv_results_`` holds those;
        ``halving_`` the rounds). Needs an int ``cv``. A classifier whose
        families are chosen (``families="auto"``) beyond the rows where the
        exact SVM is searched also screens the exact SVM's whole grid beside
        them on one subsample of 5,000 rows (at most half the data); its best
        configuration is the one the search then challenges its winner with
        on all rows, where the exact SVM's measured cost fits the time left.
        "auto": with an int ``cv``, from 20,001 rows on (where the grid on
        every row is the search's cost).
    learn_widths : {"auto", "diagonal", "agop", "none"} or bool, default="auto"
        The kernel's metric, learned first on a subsample and searched around:
        "diagonal" is one RBF width per feature (:class:`KernelWidths`: features
        that do not help get widths near 0, as gradient boosting ignores them);
        "agop" a full metric that also turns and combines columns
        (:class:`KernelMetric`: the Recursive Feature Machine's average gradient
        outer product rounds; low rank plus diagonal beyond 64 features); "auto"
        the diagonal, then AGOP rounds from it, the one that scored best on
        held-out rows kept, from 5,000 rows of 2 to 200 dense features (True: on
        any data; False or "none": not learned). ``gamma_factors`` then scale the
        learned kernel and its penalty joins the alphas. Their time is priced
        from their measured steps within ``time_budget``. Where FALKON is the one
        family, its kernel is then chosen: RBF or the Laplacian
        ``exp(-gamma ||x - y||_1)``, both grids scored on one held-out part of a
        subsample, the Laplacian kept only where it scores higher
        (``best_params_["kernel"]``; its time priced from the grid's measured
        units).
    log_target : {"auto", True, False}, default="auto"
        Whether the search may fit its lines on ``log y`` (predicting ``exp`` of that:
        scikit-learn's :class:`~sklearn.compose.TransformedTargetRegressor`), a
        dimension of its space tried beside the best line after the race's first
        round and kept only where it scores higher on the target as given
        (``best_params_["target"]`` is then "log"). "auto": where every value of
        ``y`` is positive, the largest at least 10 times the smallest, and the
        log brings its skewness nearer zero by more than its standard error,
        ``sqrt(6 / n)`` (prices, counts, run times);
        True: on any positive ``y`` (an error otherwise); False: never.
    dtype : {None, "float32", "float64"}, default=None
        dtype of the refitted FALKON model (the other families' refits are
        float32 as their own defaults). The grid scores the exact minimiser of
        each (gamma, alpha); a float32 FALKON fit reproduces it only for
        penalties ``alpha >= 1e-5 * n`` (``FLOAT32_PENALTY_FLOOR``; below, its
        float32 preconditioner loses the digits CG needs). None: every alpha is
        searched, and a point below that floor is refitted in float64 (its
        ``params`` say ``dtype="float64"``); "float32": alphas below the floor
        are not searched (a warning names those given); "float64": every
        refit is float64 (twice the memory and time of float32).
    time_budget : float or str, default=None
        Seconds (or "90s", "10m", "1h") for the whole fit: the widths, the
        search and the refit. The gammas nearest ``gamma_scale`` are tried
        first, and a gamma starts only if it (predicted from the last one
        measured) and the refit of the best so far (predicted from its
        measured fold fits; FALKON's from the grid's) end within the budget.
    memory_budget : int, str or None, default=None
        Bytes (or "2G") for the shared matrices; None: the library's default.
    n_jobs : int, default=None
        Threads (None: 1, -1: every core).
    random_state : int, RandomState or None, default=None
        Fold shuffling and FALKON's centres.
    verbose : int, default=0
        1: a progress bar with the best score so far; 2: also the leaderboard.

    Attributes
    ----------
    best_estimator_ : estimator
        The best configuration refitted on every row; ``predict`` goes through it.
    best_params_ : dict
        Its parameters (``family``, ``gamma`` and ``C`` or ``alpha``, and for
        FALKON ``n_components`` and the refit's ``dtype``): ``best_estimator_``
        is exactly this configuration, refitted (the same centres or
        landmarks, drawn from the same seed).
    best_score_ : float
        Its mean cross-validated score.
    best_index_ : int
        Its row of ``cv_results_``.
    cv_results_ : dict of ndarray
        One entry per configuration, in :class:`sklearn.model_selection.GridSearchCV`'s
        format (``params``, ``param_*``, ``split{{k}}_test_score``, ``mean_test_score``,
        ``rank_test_score``, ``mean_fit_time``, ...).
    family_choice_ : str
        Why these families were searched (the rule as it applied).
    n_splits_ : int
    complete_ : bool
        False when the time budget or Ctrl-C stopped the search early, or a gamma
        failed (its configurations dropped with a warning).
    widths_ : KernelWidths or None
        The learned widths (None where they were not learned); ``best_params_``'s
        ``gamma`` is then one width per feature (the factor times the widths),
        while ``cv_results_`` lists the factors.
    kernel_metric_ : KernelMetric or None
        The learned metric where the search ran on it (``best_params_``'s
        ``gamma`` is then a :class:`kernelscale.kernels.Metric`, the factor times
        the learned one); ``directions_`` are the combinations of columns that
        matter.
    feature_relevance_ : ndarray of shape (n_features_in,)
        With learned widths or metric: each feature's share of the kernel's
        distance (``KernelWidths.feature_relevance_`` /
        ``KernelMetric.feature_relevance_``).
    capacity_ : list of dict or None
        With FALKON the winner, automatic ``n_components`` and a
        ``time_budget``: each doubling of the centres the time left allowed,
        fitted on the first fold's training rows (``n_components``, ``score``
        on its held-out rows, ``seconds``, ``kept``: scored better than the
        grid's model there). ``best_params_["n_components"]`` is the last kept.
    leaves_ : list of dict or None
        With FALKON the refitted winner and a ``time_budget``: each local model
        scored (:class:`kernelscale.LocalKernelRegressor`; ``n_leaves``,
        ``feature``, ``gamma_factor``, ``own_widths``, ``score`` on the first
        fold's held-out rows, ``seconds``, ``kept``: scored above the model
        without leaves and every leaves before it), then, where local models won
        and time was left, each other leaf count averaged with them
        (``averaged``: True; ``score``: the average's on the first fold;
        ``kept``: it raised the average's score). None where the stage did not
        run; ``stages_`` says why. Where an average was kept,
        ``best_estimator_`` is a ``VotingRegressor`` of the local models
        (``best_params_["averaged_n_leaves"]``) and ``model_origin_`` is
        "average".
    challenger_ : dict or None
        With ``families="auto"``, a classifier, a ``time_budget`` and a winner
        of another family: the exact SVM as a challenger (``params``), at its
        best configuration of the family screen (see ``halving``), else or
        where that one is predicted too slow at its defaults (C=1, the searched
        kernel's reference gamma). Its cost measured on growing subsamples
        (``exponent``, ``predicted_fold_s``, ``predicted_refit_s``); where
        both fit the time left, its first-fold ``score`` against the winner's
        (``winner_score``); ``won``: it was refitted instead (then its C and
        gamma are moved on the first fold while that scores higher and the time
        left pays: ``model_origin_`` "challenger's neighbour" where a move won).
    halving_ : list of dict or None
        With ``halving``: each screening round's ``stage`` ("families" or
        "gammas"), family, rows, gammas tried and kept, best score (and for
        the family screen the best parameters) and seconds.
    search_time_, refit_time_ : float
        Seconds.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelscale import KernelRegressorCV
    >>> X = np.linspace(0, 6, 300)[:, None]
    >>> y = np.sin(X).ravel()
    >>> search = KernelRegressorCV(n_components=50, random_state=0).fit(X, y)
    >>> search.best_score_ > 0.99
    True
    """

    _task = "regressor"
    _parameter_constraints = {**KernelSearch._parameter_constraints,
                              "alphas": [None, "array-like"],
                              "log_target": ["boolean", Options("auto")]}

    def __init__(self, *, families="auto", gamma_factors=None, alphas=None, n_components=None,
                 cv=5, scoring=None, halving="auto", learn_widths="auto", log_target="auto",
                 dtype=None, time_budget=None, memory_budget=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.families = families
        self.gamma_factors = gamma_factors
        self.alphas = alphas
        self.n_components = n_components
        self.cv = cv
        self.scoring = scoring
        self.halving = halving
        self.learn_widths = learn_widths
        self.log_target = log_target
        self.dtype = dtype
        self.time_budget = time_budget
        self.memory_budget = memory_budget
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Search the grid and refit the best configuration on every row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : KernelRegressorCV
        """
        return self._common_fit(X, y, sample_weight, classifier=False)

    def _penalties(self, n):
        return {"Cs": None,
                "alphas": check_grid("alphas", self.alphas, default=default_alphas(n))}

    def _log_target(self, y):
        return wants_log_target(self.log_target, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
