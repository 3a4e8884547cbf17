"""``NystromKernelRidgeClassifier(probability=True)``: calibrated FALKON scores."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics import log_loss

from kernelscale import NystromKernelRidgeClassifier, load_model, save_model
from kernelscale.datasets import ArrayChunks, make_nonlinear_problem
from kernelscale.models._probability import sigmoid


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def _fit(X, y, **params):
    return NystromKernelRidgeClassifier(n_components=300, random_state=0, probability=True,
                                        **params).fit(X, y)


def test_multiclass_probabilities_are_calibrated(digits):
    X, y = digits
    model = _fit(X[:1400], y[:1400])
    P = model.predict_proba(X[1400:])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert P.shape == (len(X) - 1400, 10) and np.all(P >= 0)
    # far better than a constant, and the ranking of the scores is kept
    assert log_loss(y[1400:], P, labels=model.classes_) < 0.3
    agree = np.mean(model.classes_[P.argmax(axis=1)] == model.predict(X[1400:]))
    assert agree >= 0.97
    np.testing.assert_allclose(model.predict_log_proba(X[1400:]), np.log(P))


def test_binary_sigmoid_is_the_mapping_of_the_score(digits):
    X, y = digits
    yb = np.where(y > 4, "high", "low")
    model = _fit(X[:1400], yb[:1400])
    f = model.decision_function(X[1400:])
    P = model.predict_proba(X[1400:])
    # LIBSVM's sign: the sigmoid gives the probability of classes_[1] (positive scores)
    np.testing.assert_allclose(P[:, 1], sigmoid(f, model.probA_[0], model.probB_[0]))
    assert model.probA_[0] < 0


def test_probability_survives_a_model_file(tmp_path, digits):
    X, y = digits
    model = _fit(X[:600], y[:600])
    save_model(model, tmp_path / "m.ksm")
    np.testing.assert_array_equal(load_model(tmp_path / "m.ksm").predict_proba(X[600:700]),
                                  model.predict_proba(X[600:700]))


def test_without_probability_there_is_no_predict_proba(digits):
    X, y = digits
    model = NystromKernelRidgeClassifier(n_components=50, random_state=0).fit(X[:300], y[:300])
    assert not hasattr(model, "predict_proba")


def test_bad_input_is_refused_before_fitting(digits):
    X, y = digits
    few = np.r_[np.flatnonzero(y == 0)[:40], np.flatnonzero(y == 1)[:3]]
    with pytest.raises(ValueError, match="class 1 has 3 rows"):
        _fit(X[few], y[few])
    X2, y2 = make_nonlinear_problem(200, random_state=0)
    with pytest.raises(ValueError, match="not a stream"):
        _fit(ArrayChunks(X2, y2, chunk_rows=50), None)
