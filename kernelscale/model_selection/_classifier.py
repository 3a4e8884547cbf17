"""``KernelClassifierCV``: the most accurate kernel classifier for the data."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._constraints import Options
from .._validation import available_when
from ..models.ridge import calibrated_proba
from ._search import KernelSearch
from ._space import (
    DEFAULT_CS,
    check_grid,
    default_alphas,
)

__all__ = ["KernelClassifierCV"]


class KernelClassifierCV(ClassifierMixin, KernelSearch):
    """The most accurate kernel classifier for the data, by a search that shares its work.

    Cross-validates every configuration of the chosen families and refits the
    best on all rows. Unlike ``GridSearchCV`` around an SVM, the work is shared
    across the grid: the exact SVM computes the squared distances once, each
    gamma is one elementwise exp, each fold's block is cut from that matrix,
    and along increasing ``C`` each binary problem starts from the previous
    solution; the FALKON family merges fold statistics and serves every alpha
    from one eigendecomposition per gamma; the Nystrom SVM family maps every row
    once per gamma from landmark distances computed once, and warm-starts each
    fold's linear SVM along ``C``. The scores are those of the refitted models
    (``KernelSVC``, ``NystromKernelRidgeClassifier``, ``ApproxKernelSVC``) on
    the same folds.

    Parameters
    ----------
    families : "auto", str or list of str, default="auto"
        Model families to search: "exact-svm" (KernelSVC), "falkon"
        (NystromKernelRidgeClassifier), "nystrom-svm" (ApproxKernelSVC on a Nystroem
        map), "rff-svm" (ApproxKernelSVC on random Fourier features). "auto" chooses
        from the data's
        shape and the memory budget (see ``family_choice_``).
    gamma_factors : list of float, default=None
        gamma = ``gamma_scale * factor``, ``gamma_scale = 1 / (n_features X.var())``
        (scikit-learn's "scale"); None means 2^-3 .. 2^3 (7 values).
    Cs : list of float, default=None
        SVM penalties; None means 10^-1 .. 10^2 in half decades (7 values).
    alphas : list of float, default=None
        FALKON penalties (absolute, as ``NystromKernelRidgeClassifier``'s
        ``alpha``); None means ``n * 10^-7 .. n * 10^-1``.
    n_components : int, default=None
        Centres of the FALKON family and landmarks of the Nystrom SVM family;
        None: FALKON's automatic number, at most 1000 while searching (their
        statistics / Newton Hessians cost n m^2 per gamma).
    cv : int or cross-validation splitter, default=5
        An int is stratified folds, shuffled by ``random_state``; rows in an order
        of their own (consecutive rows nearer than random pairs, as rows in time
        order are) get contiguous blocks instead (scikit-learn's unshuffled folds),
        which ``family_choice_`` says.
    scoring : str, default=None
        "accuracy" (None), "balanced_accuracy", "f1", "f1_macro", "f1_weighted" or
        "roc_auc" (two classes).
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
    class_weight : dict, "balanced", "auto" or None, default="auto"
        As :class:`kernelscale.KernelSVC`'s (per fold: "balanced" uses the
        fold's counts). "auto": where the rarest class holds under half its
        balanced share of the rows, the grid's best gamma is cross-validated
        again with ``class_weight="balanced"`` (within the time budget) and
        the refit takes whichever scored higher (``best_params_``'s
        ``class_weight``); otherwise None.
    multiclass : {"ovo", "ovr"}, default="ovo"
        How the SVM trains several classes.
    break_ties : bool, default=False
        How the SVM's tied one-vs-one votes go: to the class listed first
        (LIBSVM's rule, so the scores are ``GridSearchCV(SVC())``'s) or to the
        larger confidence (:class:`kernelscale.KernelSVC`'s ``break_ties``).
    probability : bool, default=False
        Refit the best with ``probability=True`` (its own, calibrated on the
        decision values of held-out folds: 5 more fits, counted in
        ``time_budget``) and offer ``predict_proba``. The search is unchanged.

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
    leaves_ : None
        Local models are regressors (:class:`KernelRegressorCV`'s ``leaves_``).
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
    classes_ : ndarray

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import KernelClassifierCV
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> search = KernelClassifierCV(random_state=0).fit(X, y)
    >>> search.best_params_["family"] in ("exact-svm", "falkon"), search.best_score_ > 0.9
    (True, True)
    """

    _task = "classifier"
    _parameter_constraints = {
        **KernelSearch._parameter_constraints,
        "Cs": [None, "array-like"],
        "alphas": [None, "array-like"],
        "class_weight": [None, "dict", Options("balanced", "auto")],
        "multiclass": [Options("ovo", "ovr")],
        "break_ties": ["boolean"],
        "probability": ["boolean"],
    }

    def __init__(self, *, families="auto", gamma_factors=None, Cs=None, alphas=None,
                 n_components=None, cv=5, scoring=None, class_weight="auto", multiclass="ovo",
                 break_ties=False, probability=False, halving="auto", learn_widths="auto",
                 dtype=None, time_budget=None, memory_budget=None, n_jobs=None,
                 random_state=None, verbose=0):
        self.families = families
        self.gamma_factors = gamma_factors
        self.Cs = Cs
        self.alphas = alphas
        self.n_components = n_components
        self.cv = cv
        self.scoring = scoring
        self.class_weight = class_weight
        self.multiclass = multiclass
        self.break_ties = break_ties
        self.probability = probability
        self.halving = halving
        self.learn_widths = learn_widths
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
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : KernelClassifierCV
        """
        return self._common_fit(X, y, sample_weight, classifier=True)

    def _penalties(self, n):
        return {"Cs": check_grid("Cs", self.Cs, default=DEFAULT_CS),
                "alphas": check_grid("alphas", self.alphas, default=default_alphas(n))}

    def _imbalanced(self, data):
        if not (isinstance(self.class_weight, str) and self.class_weight == "auto"):
            return False
        counts = np.bincount(data.y_index)
        return bool(counts.min() / counts.sum() < 0.5 / counts.size)

    def _classifier_settings(self):
        # "auto": the grid weighs no class; the class-weight stage tries "balanced"
        weights = None if isinstance(self.class_weight, str) and self.class_weight == "auto" \
            else self.class_weight
        return {"class_weight": weights, "multiclass": self.multiclass,
                "break_ties": self.break_ties, "probability": self.probability}

    def decision_function(self, X):
        """Decision values of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def _has_probability(self):
        if self.probability or getattr(self, "calibration_", None) is not None or \
                getattr(self, "ensemble_", None) is not None:
            return True
        held = ""
        if hasattr(self, "best_params_"):
            held = (f"; this search's model is the {self.model_origin_} of the "
                    f"{self.best_params_['family']} family")
        raise AttributeError(
            "predict_proba is available with probability=True (the best is refitted with "
            "its own calibration, 5 more fits within the time budget); a FALKON winner "
            f"refitted on every row offers it without, from its folds' scores{held}.")

    @available_when(_has_probability)
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        With ``probability=True``: its own (Platt's sigmoid fitted on the decision
        values of held-out folds of its refit). An ensemble's: the weighted average
        of its members' probabilities (each calibrated on its out-of-fold scores).
        Without either, where the best is a FALKON configuration: sigmoids of its
        decision values fitted on the out-of-fold scores the search measured
        (``calibration_``), at no extra fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        if self.probability or self.ensemble_ is not None:
            return self.best_estimator_.predict_proba(X)
        scores = self.best_estimator_.decision_function(X)
        return calibrated_proba(scores, *self.calibration_)

    @available_when(_has_probability)
    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
