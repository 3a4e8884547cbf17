"""``KernelSVC(probability=True)``: Platt scaling and pairwise coupling, against LIBSVM's."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification
from sklearn.metrics import log_loss
from sklearn.svm import SVC

from kernelscale import KernelSVC
from kernelscale.models._probability import couple_pairs, fit_sigmoid, sigmoid


def _sklearn_svc(**params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # probability is deprecated in 1.9
        return SVC(probability=True, **params)


def test_sigmoid_fit_is_the_maximum_likelihood_of_platts_targets():
    rng = np.random.default_rng(0)
    f = rng.normal(size=400)
    positive = rng.random(400) < 1 / (1 + np.exp(-2.0 * f))
    A, B = fit_sigmoid(f, positive)
    n_pos, n_neg = positive.sum(), (~positive).sum()
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(a, b):
        p = sigmoid(f, a, b)
        return -np.sum(t * np.log(p) + (1 - t) * np.log(1 - p))
    best = loss(A, B)
    for dA, dB in [(1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3)]:
        assert loss(A + dA, B + dB) >= best
    assert -2.6 < A < -1.4  # the generating slope, up to sampling


def test_coupling_recovers_consistent_pairwise_probabilities():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(4), size=50)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    r = np.column_stack([P[:, i] / (P[:, i] + P[:, j]) for i, j in pairs])
    assert np.allclose(couple_pairs(r, 4), P, atol=1e-10)


@pytest.mark.parametrize("data", ["binary", "digits"])
def test_log_loss_matches_libsvm(data):
    if data == "binary":
        X, y = make_classification(600, n_features=6, random_state=0)
    else:
        X, y = load_digits(return_X_y=True)
        X = X / 16.0
    cut = int(0.7 * len(y))
    ours = KernelSVC(probability=True, random_state=0).fit(X[:cut], y[:cut])
    theirs = _sklearn_svc(random_state=0).fit(X[:cut], y[:cut])
    P = ours.predict_proba(X[cut:])
    assert P.shape == (len(y) - cut, len(ours.classes_)) and np.allclose(P.sum(axis=1), 1)
    ours_loss, their_loss = log_loss(y[cut:], P), log_loss(y[cut:], theirs.predict_proba(X[cut:]))
    # other internal folds than LIBSVM's: within 3% of its log-loss
    assert abs(ours_loss - their_loss) <= 0.03 * their_loss
    assert np.allclose(np.exp(ours.predict_log_proba(X[cut:])), P)
    # the sigmoids' slopes are LIBSVM's to within the folds' noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert np.allclose(ours.probA_, theirs.probA_, rtol=0.15)


def test_one_vs_rest_probabilities_are_normalised():
    X, y = load_digits(n_class=4, return_X_y=True)
    model = KernelSVC(probability=True, multiclass="ovr", random_state=0).fit(X / 16, y)
    P = model.predict_proba(X / 16)
    assert np.allclose(P.sum(axis=1), 1) and np.mean(P.argmax(axis=1) == y) > 0.95


def test_predict_proba_only_with_probability_and_enough_rows():
    X, y = make_classification(60, n_features=4, random_state=0)
    assert not hasattr(KernelSVC().fit(X, y), "predict_proba")
    y_small = y.copy()
    y_small[:3] = 2  # a third class with 3 rows, fewer than the 5 internal folds
    with pytest.raises(ValueError, match="class 2 has 3 rows"):
        KernelSVC(probability=True).fit(X, y_small)


@pytest.mark.parametrize("n_class", [2, 4])
def test_approx_svc_probabilities_are_calibrated_like_the_exact_ones(n_class):
    from kernelscale import ApproxKernelSVC

    X, y = load_digits(n_class=n_class, return_X_y=True)
    X = X / 16.0
    cut = int(0.7 * len(y))
    approx = ApproxKernelSVC(n_components=300, probability=True, random_state=0)
    P = approx.fit(X[:cut], y[:cut]).predict_proba(X[cut:])
    exact = KernelSVC(probability=True, random_state=0).fit(X[:cut], y[:cut])
    assert np.allclose(P.sum(axis=1), 1) and P.shape[1] == n_class
    # one-vs-rest sigmoids on Nystrom features against coupled exact pairs: both small
    assert log_loss(y[cut:], P) < 2 * log_loss(y[cut:], exact.predict_proba(X[cut:])) + 0.02
    assert not hasattr(approx, "partial_fit")  # it could not update the sigmoids


def test_approx_svc_probability_refuses_a_stream():
    from kernelscale import ApproxKernelSVC
    from kernelscale.datasets import ArrayChunks

    X, y = make_classification(100, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="not a stream"):
        ApproxKernelSVC(probability=True).fit(ArrayChunks(X, y, chunk_rows=20))


@pytest.mark.parametrize("n_class", [2, 4])
def test_doubly_sgd_log_loss_probabilities_are_its_log_odds(n_class):
    from kernelscale import DoublySGDSVC

    X, y = load_digits(n_class=n_class, return_X_y=True)
    X = X / 16.0
    model = DoublySGDSVC(loss="log_loss", max_iter=200, random_state=0).fit(X, y)
    P = model.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1) and np.array_equal(model.classes_[P.argmax(1)],
                                                            model.predict(X))
    if n_class == 2:  # the logistic model's own probability, no calibration
        assert np.allclose(P[:, 1], 1 / (1 + np.exp(-model.decision_function(X))))
    assert log_loss(y, P) < 0.3
    assert not hasattr(DoublySGDSVC(max_iter=5).fit(X, y), "predict_proba")
