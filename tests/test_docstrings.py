"""Every estimator's docstring is written out in its class; shared entries stay alike.

Issue 37: the docstrings were stitched together from shared snippets in other modules
(``EXACT_PARAMS_DOC``, ``APPROX_PARAMS_DOC``, ...), so a reader of a class did not see
its parameters. They are inline now, as in scikit-learn, and, as scikit-learn's
``assert_docstring_consistency`` does, this checks that a parameter several
estimators share is described the same way in each.
"""

import inspect

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import kernelscale.model_selection as model_selection
import kernelscale.models as models

APPROX = ["ApproxKernelSVC", "ApproxKernelSVR", "ApproxKernelOneClassSVM", "ApproxKernelRidge",
          "ApproxKernelRidgeClassifier", "KernelLogisticRegression"]
EXACT = ["KernelSVC", "KernelSVR", "KernelOneClassSVM"]
FALKON = ["NystromKernelRidge", "NystromKernelRidgeClassifier"]
UNSUPERVISED = ["ApproxKernelPCA", "ApproxKernelKMeans"]
SEARCHES = ["KernelClassifierCV", "KernelRegressorCV"]

#: (section, entries, estimators that share them)
SHARED = [
    ("Parameters", ["feature_map", "n_components", "kernel", "gamma", "degree", "dtype"],
     APPROX),
    ("Parameters", ["memory_budget", "verbose", "random_state"],
     ["ApproxKernelSVR", "ApproxKernelOneClassSVM"]),
    ("Parameters", ["kernel", "degree", "gamma", "kernel_params", "tol", "cache_size",
                    "shrinking", "working_set_size", "memory_budget"], EXACT),
    # KernelSVC's cap is per binary problem, and its bar runs over the problems
    ("Parameters", ["max_iter", "verbose"], ["KernelSVR", "KernelOneClassSVM"]),
    ("Attributes", ["support_", "support_vectors_", "intercept_", "n_support_", "n_iter_",
                    "objective_", "fit_status_", "fit_time_", "memory_plan_",
                    "n_features_in_"], ["KernelSVR", "KernelOneClassSVM"]),
    ("Parameters", ["class_weight"], ["KernelSVC", "ApproxKernelSVC", "LinearSVC",
                                      "DoublySGDSVC"]),
    ("Parameters", ["class_weight"], ["ApproxKernelRidgeClassifier",
                                      "NystromKernelRidgeClassifier"]),
    ("Parameters", ["n_components", "sampling", "kernel", "gamma", "degree", "kernel_params",
                    "alpha", "max_iter", "tol", "preconditioner", "dtype", "memory_budget",
                    "random_state", "verbose"], FALKON),
    ("Attributes", ["components_", "component_indices_", "dual_coef_", "kernel_", "alpha_",
                    "n_components_", "n_iter_", "residuals_", "n_features_in_"], FALKON),
    ("Parameters", ["feature_map", "kernel", "gamma", "degree", "coef0", "dtype"],
     UNSUPERVISED),
    # the two searches: one search, a classifier's and a regressor's families and scores
    ("Parameters", ["gamma_factors", "n_components", "halving", "learn_widths", "dtype",
                    "time_budget", "memory_budget", "n_jobs", "random_state", "verbose"],
     SEARCHES),
    ("Attributes", ["best_estimator_", "best_params_", "best_score_", "best_index_",
                    "cv_results_", "family_choice_", "n_splits_", "complete_", "widths_",
                    "feature_relevance_", "capacity_", "challenger_", "halving_"], SEARCHES),
]


def _entries(name, section):
    owner = models if hasattr(models, name) else model_selection
    doc = ClassDoc(getattr(owner, name), config={"show_class_members": False})
    return {p.name: (p.type, "\n".join(p.desc)) for p in doc[section]}


@pytest.mark.parametrize("section, names, estimators", SHARED,
                         ids=[f"{s[0]}-{s[2][0]}-{s[1][0]}" for s in SHARED])
def test_shared_entries_are_described_alike(section, names, estimators):
    described = {est: _entries(est, section) for est in estimators}
    for name in names:
        texts = {est: entries.get(name) for est, entries in described.items()}
        missing = [est for est, text in texts.items() if text is None]
        assert not missing, f"{section} {name!r} is not documented in {missing}"
        first = estimators[0]
        for est, text in texts.items():
            assert text == texts[first], (
                f"{name!r} is described differently in {est} and {first}: edit both")


def test_docstrings_are_literals_in_their_classes():
    # a docstring stitched at import time is an assignment or an expression, not a literal
    import ast

    for name in models.__all__:
        cls = getattr(models, name)
        tree = ast.parse(inspect.getsource(cls))
        body = tree.body[0].body
        assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), (
            f"{name}'s docstring is not a literal in its class")
        assert not any(isinstance(s, ast.Assign) and getattr(s.targets[0], "id", "") ==
                       "__doc__" for s in body), f"{name} assigns __doc__"


def test_every_chunked_fit_describes_its_data_alike():
    chunked = ["NystromKernelRidge", "NystromKernelRidgeClassifier", "LinearSVC",
               "ApproxKernelRidge", "ApproxKernelRidgeClassifier", "ApproxKernelSVC",
               "ApproxKernelSVR", "KernelLogisticRegression", "DoublySGDSVC"]
    sentence = ("A dask array (chunked by rows) is fitted on the active dask client; a "
                ":class:`kernelscale.datasets.ChunkedDataset` is streamed chunk by chunk "
                "under ``memory_budget`` (its chunks carry the labels).")
    for name in chunked:
        params = {p.name: " ".join(p.desc) for p in
                  FunctionDoc(getattr(models, name).fit)["Parameters"]}
        assert sentence in params["X"], name
        assert params["y"].startswith("Required unless ``X`` is a ChunkedDataset."), name
