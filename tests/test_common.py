"""scikit-learn's estimator checks over every feature map and model.

Every map passes every check with ``dtype="float64"``. With the float32 default
(maps and models alike), two checks are expected to fail, and only for a documented reason:
``check_methods_sample_order_invariance`` and ``check_methods_subset_invariance``
compare transforms of reordered / sliced rows with absolute tolerances of 1e-9
and 1e-7, below float32 resolution (~6e-8 relative), and BLAS may round a row
differently depending on its position in the block. All other checks run.

Every estimator is checked at its defaults as well as in the variants below.
The models pass every check except ``check_sample_weight_equivalence_on_*``
for three documented reasons: the approximate-kernel models (and the Nystrom
kernel ridge models' centres) pick Nystroem landmarks (or draw frequencies)
from the rows they are given, so duplicating a
row is not the same data as doubling its weight; and the hinge-loss dual
coordinate descent (``solver="auto"`` on the checks' small data, or the hinge
loss) visits coordinates in a random order that depends on the number of rows,
so the two fits stop at different points within ``tol`` of the optimum (the
squared-hinge Newton solver does pass: it is exact). The same
goes for :class:`KernelSVC` (SMO stops within ``tol`` of the optimum, LIBSVM's
SVC fails this check for the same reason), for :class:`KernelSVR` and
:class:`KernelOneClassSVM` (the same SMO) and :class:`DoublySGDSVC` (random
batches). ``KernelSVC(solver="subgradient")`` is left out: seed 003's method
is offered for comparison only and needs thousands of passes to pass
``check_classifiers_train``'s accuracy bar. ``NystromKernelRidgeClassifier()`` at
its defaults fails ``check_class_weight_classifiers``, for the reason given in
``expected_failed_checks``.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelscale import (
    ApproxKernelKMeans,
    ApproxKernelOneClassSVM,
    ApproxKernelPCA,
    ApproxKernelRidge,
    ApproxKernelRidgeClassifier,
    ApproxKernelSVC,
    ApproxKernelSVR,
    DoublySGDSVC,
    KernelClassifierCV,
    KernelLogisticRegression,
    KernelOneClassSVM,
    KernelRegressorCV,
    KernelSVC,
    KernelSVR,
    LinearSVC,
    Nystroem,
    NystromKernelRidge,
    NystromKernelRidgeClassifier,
    RandomFourierFeatures,
    RandomMaclaurin,
    TensorSketch,
)

FLOAT32_ORDER_CHECKS = {
    "check_methods_sample_order_invariance": "float32 rounding depends on the row's "
    "position in the BLAS block; the check's atol=1e-9 is below float32 resolution",
    "check_methods_subset_invariance": "float32 rounding depends on the row's position "
    "in the BLAS block; the check's atol=1e-7 is below float32 resolution",
}

# every estimator at its defaults first (issue: "not only at test-friendly parameters"),
# then the variants that exercise other paths
DEFAULTS = [
    ApproxKernelSVC(), ApproxKernelRidge(), ApproxKernelRidgeClassifier(),
    ApproxKernelSVR(), ApproxKernelOneClassSVM(), KernelSVR(), KernelOneClassSVM(),
    KernelLogisticRegression(), ApproxKernelPCA(), ApproxKernelKMeans(), NystromKernelRidge(),
    NystromKernelRidgeClassifier(), DoublySGDSVC(), KernelClassifierCV(), KernelRegressorCV(),
]

ESTIMATORS = DEFAULTS + [
    RandomFourierFeatures(),
    RandomFourierFeatures(dtype="float64"),
    RandomFourierFeatures(kernel="laplacian", dtype="float64"),
    RandomFourierFeatures(kind="sincos", sampling="orthogonal", dtype="float64"),
    RandomFourierFeatures(kind="sincos", sampling="structured"),
    RandomFourierFeatures(kind="sincos", sampling="structured", dtype="float64"),
    Nystroem(),
    Nystroem(dtype=None),
    Nystroem(decomposition="eigh", dtype="float64"),
    Nystroem(sampling="leverage", dtype="float64"),
    Nystroem(sampling="kmeans", n_components=10, dtype="float64"),
    Nystroem(kernel="laplacian", dtype="float64"),
    Nystroem(kernel="polynomial", dtype="float64"),
    RandomMaclaurin(),
    RandomMaclaurin(dtype="float64"),
    TensorSketch(),
    TensorSketch(dtype="float64"),
    LinearSVC(),
    LinearSVC(solver="newton"),
    LinearSVC(solver="lbfgs"),
    LinearSVC(loss="hinge"),
    LinearSVC(solver="dual_cd", class_weight="balanced"),
    ApproxKernelSVC(n_components=20, dtype="float64"),
    ApproxKernelSVC(feature_map="rff", n_components=50),
    ApproxKernelRidgeClassifier(n_components=20, dtype="float64"),
    ApproxKernelRidge(n_components=20, dtype="float64"),
    ApproxKernelRidge(feature_map="sorf", n_components=32),
    NystromKernelRidge(n_components=20, dtype="float64"),
    NystromKernelRidge(n_components=20),
    NystromKernelRidgeClassifier(n_components=20, dtype="float64"),
    KernelLogisticRegression(n_components=20, dtype="float64"),
    KernelLogisticRegression(n_components=20, multiclass="ovr", solver="newton-cg"),
    ApproxKernelPCA(map_components=20, dtype="float64"),
    ApproxKernelKMeans(n_clusters=3, n_components=20, dtype="float64"),
    KernelSVC(),
    KernelSVC(multiclass="ovr"),
    KernelSVC(decision_function_shape="ovo"),
    KernelSVC(probability=True, random_state=0),
    ApproxKernelSVC(n_components=20, probability=True, random_state=0),
    NystromKernelRidgeClassifier(n_components=20, probability=True, random_state=0,
                                 dtype="float64"),
    KernelSVC(kernel="polynomial", coef0=1.0),
    KernelSVC(kernel="precomputed"),
    KernelSVC(kernel="laplacian", shrinking=False, working_set_size=4, cache_size=0.01),
    KernelSVR(kernel="precomputed"),
    # the row cache (a budget below the 4 n^2 bytes of the matrix), without shrinking
    KernelSVR(kernel="poly", coef0=1.0, shrinking=False, working_set_size=16, cache_size=0.05,
              memory_budget=20_000),
    ApproxKernelSVR(n_components=20, dtype="float64", loss="epsilon_insensitive"),
    ApproxKernelOneClassSVM(feature_map="rff", n_components=20, dtype="float64"),
    KernelOneClassSVM(kernel="linear", nu=0.2, shrinking=False, working_set_size=4),
    DoublySGDSVC(max_iter=100),
    DoublySGDSVC(loss="log_loss", max_iter=100, kernel="laplacian"),
]

SAMPLE_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                        "check_sample_weight_equivalence_on_sparse_data")


def _solver_for(estimator):
    # solver="auto" picks dual CD for the hinge loss and for data with fewer than
    # 20 rows per feature, as the checks' small data sets all are.
    if getattr(estimator, "loss", None) == "hinge" or getattr(estimator, "solver", None) == "auto":
        return "dual_cd"
    return None


def expected_failed_checks(estimator):
    failures = {}
    if getattr(estimator, "probability", False):
        # the internal folds split duplicated rows apart (as SVC(probability=True)'s)
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, "internal cross-validation"))
        failures["check_fit2d_1feature"] = (
            "the check's data hold a class with fewer rows than the 5 internal folds, which "
            "probability=True refuses with that reason (issue 19's bad input)")
        # KernelSVC's data happen to agree; the choice is documented in predict_proba
        failures["check_classifiers_train"] = (
            "predict is the model's own rule, not argmax(predict_proba): LIBSVM's and "
            "scikit-learn's SVC's choice, which the check does not allow")
    if isinstance(estimator, (KernelClassifierCV, KernelRegressorCV)):
        reason = "the folds split duplicated rows apart, so a repeated row is different " \
                 "data from a doubled weight (GridSearchCV fails this check too)"
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, reason))
        failures.update(FLOAT32_ORDER_CHECKS)  # the refitted models' float32 blocks
        if isinstance(estimator, KernelClassifierCV):
            reason = "the check's data hold a class with fewer rows than the 5 folds, " \
                     "which the search refuses with that reason (issue 18's bad input)"
            failures["check_fit2d_1feature"] = reason
        return failures
    if isinstance(estimator, NystromKernelRidgeClassifier) and estimator.alpha == "auto" \
            and estimator.dtype == "float32":
        failures["check_class_weight_classifiers"] = (
            "the check's 50 noisy rows become 50 centres and the default penalty 1e-6 n "
            "lets the model interpolate them, where weights of 1000 vs 1e-4 cannot act; "
            "float32 round-off then decides: 0.78-0.84 of the test rows go to the heavy "
            "class (0.87 needed), 0.88-0.90 in float64, 0.94-1.0 with alpha=1. The default "
            "stays the most accurate on real data (MNIST 0.9785, see BENCHMARKS.md)")
    if getattr(estimator, "dtype", None) == "float32":
        failures.update(FLOAT32_ORDER_CHECKS)
    if hasattr(estimator, "feature_map") or isinstance(
            estimator, (NystromKernelRidge, NystromKernelRidgeClassifier)):
        reason = "landmarks / frequencies are drawn from the rows, so a duplicated row " \
                 "is different data from a doubled weight"
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, reason))
    elif isinstance(estimator, (KernelSVC, KernelSVR, KernelOneClassSVM)):
        reason = "SMO stops within tol of the optimum, and the duplicated rows change " \
                 "its working sets, so both fits agree to ~tol, not to 1e-7 (LIBSVM too)"
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, reason))
        # float32 kernel blocks at prediction
        failures.update(FLOAT32_ORDER_CHECKS)
        if getattr(estimator, "decision_function_shape", None) == "ovo":
            failures["check_classifiers_train"] = (
                "one-vs-one scores have one column per pair of classes, as in "
                "SVC(decision_function_shape='ovo'); the check wants one per class")
    elif isinstance(estimator, DoublySGDSVC):
        reason = "stochastic gradients on random batches: a duplicated row is sampled " \
                 "differently from a doubled weight"
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, reason))
        failures.update(FLOAT32_ORDER_CHECKS)  # float32 random features
    elif "dual_cd" in (getattr(estimator, "solver", None), _solver_for(estimator)):
        reason = "dual CD's random coordinate order depends on n, so both fits stop at " \
                 "different points within tol of the optimum"
        failures.update(dict.fromkeys(SAMPLE_WEIGHT_CHECKS, reason))
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
