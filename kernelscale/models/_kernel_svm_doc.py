"""The docstring of :class:`kernelscale.KernelSVC` (kept apart: the class is long)."""

from ._multiclass import BINARY_CLASS_WEIGHT_DOC

__all__ = ["KERNEL_SVC_DOC"]

KERNEL_SVC_DOC = """Exact kernel support vector classifier, solved in the dual by SMO.

    LIBSVM's dual and stopping rule (``tol``), so the model is
    :class:`sklearn.svm.SVC`'s. When the float32 training kernel matrix and a
    solving thread's copy of its problem's block fit ``memory_budget``, the
    matrix is computed once (one GEMM) and SMO runs on it whole;
    otherwise on working sets of ``working_set_size`` variables whose rows come
    from an LRU cache of ``cache_size`` MB, computed together by one product
    (second-order pair selection, Fan, Chen & Lin 2005; shrinking). Several
    classes are trained one-vs-one by default, as LIBSVM does (0.5 points more
    accurate than one-vs-rest on MNIST), predicting by vote; ``multiclass="ovr"``
    trains one problem per class. ``decision_function_shape`` only shapes the
    scores, as in :class:`sklearn.svm.SVC`.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the hinge loss (> 0); scaled per sample by ``sample_weight``
        and ``class_weight``.
    kernel : {"rbf", "linear", "polynomial", "poly", "laplacian", "precomputed"} or callable, \
default="rbf"
        A callable is called as ``kernel(X_block, Y, **kernel_params)`` and must
        return the Gram block. "precomputed": ``X`` is the training Gram matrix
        in ``fit`` and ``K(test, train)`` at prediction.
    degree : int, default=3
        Degree of the polynomial kernel.
    gamma : {"scale", "auto"} or float, default="scale"
        Kernel scale; "scale" is ``1 / (n_features X.var())`` as in scikit-learn.
    coef0 : float, default=0.0
        Constant of the polynomial kernel (scikit-learn's SVC default).
    kernel_params : dict, default=None
        Keyword arguments of a callable kernel.
    tol : float, default=1e-3
        Stop when the maximal violation of the optimality conditions is below it
        (LIBSVM's ``eps``).
    cache_size : float, default=256
        Kernel-row cache in MB (2**20 bytes) of the working-set solver (used when
        the kernel matrix is over ``memory_budget``); it must hold two rows.
    """ + BINARY_CLASS_WEIGHT_DOC + """
    max_iter : int, default=-1
        Cap on SMO pair updates per binary problem; -1 means LIBSVM's
        ``max(10^7, 100 n)``. Reaching it gives a ConvergenceWarning.
    multiclass : {"ovo", "ovr"}, default="ovo"
        How several classes are trained: one binary problem per pair of classes
        (prediction by vote, ties broken by summed confidence), or one per class
        against the rest (prediction by the largest score).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of ``decision_function`` for several classes: one score per class
        (for one-vs-one training, the votes plus a confidence below 1/3 that
        breaks ties, as scikit-learn's SVC computes it) or, for one-vs-one
        training only, the raw score of every pair of classes.
    break_ties : bool, default=False
        One-vs-one ``predict`` with several classes: False gives a tied vote to
        the class listed first (LIBSVM's and scikit-learn's SVC's rule, so the
        predictions are theirs); True to the larger summed confidence, so that
        ``predict`` is the arg-max of ``decision_function`` (scikit-learn's
        ``break_ties=True``).
    probability : bool, default=False
        Fit ``predict_proba``: LIBSVM's Platt scaling on the decision values of
        a 5-fold internal cross-validation (5 more fits on 4/5 of the rows;
        every class needs 5 rows), one-vs-one pairs coupled as LIBSVM does.
        ``predict`` is not changed (see :meth:`predict_proba`).
    shrinking : bool, default=True
        Drop variables stuck at a bound from the active set (LIBSVM's rule).
    working_set_size : int, default=1024
        Variables per working set; capped by what the cache holds.
    solver : {"smo", "subgradient"}, default="smo"
        "subgradient" runs seed 003's heavy-ball subgradient method on the
        representer coefficients (the intercept is then regularized) for
        comparison only; it needs ``max_iter`` passes over the kernel matrix.
    memory_budget : int, default=None
        Bytes for the temporaries of one block of kernel rows (prediction
        included); None uses :func:`kernelscale.get_config`.
    n_jobs : int, default=None
        Threads solving binary problems side by side (one-vs-one pairs, or the
        classes of one-vs-rest) when the kernel matrix is held whole; None means
        1, -1 every core. The problems share the one matrix; each thread also
        holds a copy of the block it solves, and fewer threads run (with a
        warning naming the budget that would run them all) where
        ``memory_budget`` cannot hold every thread's copy beside the matrix.
    verbose : int, default=0
        1: a progress bar over the binary problems (with the current gap); k >= 2:
        print solver progress every k outer iterations.
    random_state : int, RandomState instance or None, default=None
        Shuffles the internal folds of ``probability=True``; both solvers are
        deterministic.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors in the training data (of any problem).
    support_vectors_ : {ndarray, sparse matrix} of shape (n_SV, n_features)
        Empty for ``kernel="precomputed"``.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        ``y_i alpha_i`` of each support vector in each binary problem (zero
        where it is not a support vector of that problem).
    intercept_ : ndarray of shape (n_problems,)
    n_support_ : ndarray of shape (n_classes,)
        Support vectors per class.
    n_iter_ : ndarray of shape (n_problems,)
        SMO pair updates (or subgradient passes) per problem.
    objective_ : ndarray of shape (n_problems,)
        Dual objective ``1/2 a^T Q a - e^T a`` reached per problem (SMO).
    probA_, probB_ : ndarray of shape (n_problems,)
        The sigmoid ``1 / (1 + exp(A f + B))`` of each binary problem
        (``probability=True``).
    fit_time_ : float
        Seconds spent in the solver.
    memory_plan_ : kernelscale.MemoryPlan
        What the fit held, in bytes, and the route it chose (``choice``:
        "matrix" or the row cache's size).
    n_features_in_ : int

    See Also
    --------
    sklearn.svm.SVC : LIBSVM's implementation of the same model.
    ApproxKernelSVC : The approximate model, linear in n.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelscale import KernelSVC
    >>> X, y = make_moons(n_samples=300, noise=0.1, random_state=0)
    >>> clf = KernelSVC(C=10.0, gamma=2.0).fit(X, y)
    >>> clf.score(X, y) > 0.97
    True
    """

