"""Real tables in the Python API (issue 45): ``TabularEncoder`` reads numbers, text,
categories, booleans, dates and missing cells, and the searches take a DataFrame
with any of them straight."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernelscale import KernelClassifierCV, KernelRegressorCV
from kernelscale.datasets import TabularEncoder, needs_encoding

pd = pytest.importorskip("pandas", reason="DataFrames need pandas (the test extra has it)")


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 1500
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        "city": rng.choice(["paris", "rome", "oslo"], size=n).astype(object),
        "when": pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 800, n),
                                                             unit="D"),
        "flag": rng.random(n) > 0.5,
        "grade": pd.Categorical(rng.choice(["low", "mid", "high"], size=n)),
    })
    frame.loc[rng.choice(n, 60, replace=False), "x"] = np.nan
    frame.loc[rng.choice(n, 40, replace=False), "city"] = None
    season = np.cos(2 * np.pi * frame["when"].dt.day_of_year / 365.25)
    y = ((frame["x"].fillna(0) + 1.5 * (frame["city"] == "rome") + season
          + 0.5 * frame["flag"]) > 0.6).astype(int).to_numpy()
    return frame, y


def test_a_dataframe_with_dates_na_cells_and_text_goes_straight_into_the_search(table):
    frame, y = table
    assert needs_encoding(frame)
    search = KernelClassifierCV(families="falkon", n_components=200, gamma_factors=[0.5, 1, 2],
                                cv=3, random_state=0).fit(frame, y)
    assert search.best_score_ > 0.8
    assert search.n_features_in_ == 5 and list(search.feature_names_in_) == list(frame.columns)
    assert search.encoder_.kinds_ == ["numeric", "text", "date", "boolean", "text"]
    assert search.predict(frame.iloc[:10]).shape == (10,)
    # the refitted model takes the table too: its encoder is its first step
    assert search.best_estimator_.predict(frame.iloc[:10]).shape == (10,)
    reg = KernelRegressorCV(n_components=100, gamma_factors=[1.0], cv=3,
                            random_state=0).fit(frame, y.astype(float) + frame["flag"])
    assert reg.score(frame, y.astype(float) + frame["flag"]) > 0.5


def test_dates_become_cycles_never_one_hot():
    days = pd.to_datetime(["2023-12-31", "2024-01-01", "2024-07-01", "2024-01-02 12:00"],
                          format="ISO8601")
    encoder = TabularEncoder(scale=None).fit(pd.DataFrame({"day": days}))
    Z = encoder.transform(pd.DataFrame({"day": days}))
    names = list(encoder.get_feature_names_out())
    assert names[:3] == ["day_year", "day_day_of_year_sin", "day_day_of_year_cos"]
    assert len(names) == 7 and "day_time_sin" in names  # one row has a time of day
    year_end, year_start, july = Z[0, 1:3], Z[1, 1:3], Z[2, 1:3]
    assert np.linalg.norm(year_end - year_start) < 0.05 < np.linalg.norm(year_end - july)
    assert "dates (year, day of year and weekday as cycles)" in encoder.report_[0]
    iso = TabularEncoder().fit(np.array([["2024-01-05"], ["2024-03-01"]], dtype=object))
    assert iso.kinds_ == ["date"]


def test_many_text_values_are_warned_about_and_encoded_compactly():
    ids = np.array([[f"user{i}"] for i in range(600)], dtype=object)
    with pytest.warns(UserWarning, match=r"'x0' has 600 distinct values .* one frequency "
                                         r"column, not 600 one-hot ones"):
        encoder = TabularEncoder().fit(ids)
    assert encoder.transform(ids).shape == (600, 1)
    onehot = TabularEncoder(high_cardinality="onehot").fit(ids)
    assert onehot.n_features_out_ == 600


def test_declared_orders_unknown_values_and_missing_cells():
    X = pd.DataFrame({"cut": ["Fair", "Ideal", "Good", None], "v": [1.0, 2.0, np.nan, 4.0]})
    encoder = TabularEncoder(ordinal={"cut": ["Fair", "Good", "Ideal"]}, scale=None).fit(X)
    Z = encoder.transform(X)
    np.testing.assert_array_equal(Z[:3, 0], [0.0, 2.0, 1.0])
    assert Z[2, 1] == 2.0  # the median of 1, 2, 4
    new = pd.DataFrame({"cut": ["Superb"], "v": [1.0]})
    with pytest.warns(UserWarning, match="values training never saw, encoded as unknown: "
                                         "cut: 'Superb'"):
        assert encoder.transform(new)[0, 0] == -1.0
    with pytest.raises(ValueError, match="'Superb'.*unknown='refuse'"):
        TabularEncoder(unknown="refuse").fit(X).transform(new)
    with pytest.raises(ValueError, match=r"missing values in 2 columns: cut \(1\), v \(1\)"):
        TabularEncoder(missing="refuse").fit(X)


@pytest.mark.parametrize("column, match", [
    ([[1, 2], [3], [4], [5]], r"column 'c' holds list values \(e\.g\. \[1, 2\]\), which the "
                              r"encoder cannot read"),
    (pd.to_timedelta([1, 2, 3, 4], unit="D"), r"column 'c' holds timedelta64\[\w+\] values"),
    (["2024-01-01", "2024-01-02", "2024-01-03"] * 10 + ["yesterday"],
     r"column 'c' holds dates, but row 30 holds 'yesterday', which does not parse"),
])
def test_columns_the_encoder_cannot_read_are_one_line(column, match):
    with pytest.raises(ValueError, match=match):
        TabularEncoder().fit(pd.DataFrame({"c": column}))


def test_numeric_frames_need_no_encoding_but_the_search_standardises_every_table():
    # one encoder for the command line and the API: a DataFrame is a table and is encoded
    # (its numbers standardised), an array is searched as given
    assert not needs_encoding(np.zeros((3, 2)))
    assert not needs_encoding(pd.DataFrame({"a": [1.0, 2.0], "b": [1, 2]}))
    assert needs_encoding(pd.DataFrame({"a": [1.0, np.nan]}))
    frame = pd.DataFrame({"a": np.arange(40.0) * 1000, "b": np.arange(40.0) % 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search = KernelClassifierCV(families="exact-svm", gamma_factors=[1.0], Cs=[1.0]).fit(
            frame, np.arange(40) % 2)
    assert isinstance(search.encoder_, TabularEncoder)
    np.testing.assert_allclose(search.encoder_.transform(frame).std(axis=0), 1.0)
    array = KernelClassifierCV(families="exact-svm", gamma_factors=[1.0], Cs=[1.0]).fit(
        frame.to_numpy(), np.arange(40) % 2)
    assert array.encoder_ is None


def test_the_unseen_value_warning_points_at_the_users_line_once_per_line():
    """Regression: the warning was attributed to scikit-learn's ``_set_output.py`` and so
    repeated on every ``predict``; it names the caller's line, which Python's default filter
    shows once."""
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline

    X = pd.DataFrame({"cut": ["Fair", "Ideal", "Good", "Fair"], "v": [1.0, 2.0, 3.0, 4.0]})
    model = make_pipeline(TabularEncoder(), LinearRegression()).fit(X, [1.0, 2.0, 3.0, 4.0])
    new = pd.DataFrame({"cut": ["Superb"], "v": [1.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            model.predict(new)
    assert [w.filename for w in caught] == [__file__]
    assert "values training never saw" in str(caught[0].message)
