"""Real CSVs on the command line: named columns, text categories, missing cells, predict by name."""

import numpy as np
import pytest

from kernelscale import load_model
from kernelscale.cli import main
from kernelscale.datasets import load_table

DIRECTIONS = ["N", "E", "S", "W", "NE"]


def _weather(path, n, seed, *, label=True, order=None, unseen=None, drop=()):
    """A weather CSV: a date, a numeric column with NA, a text column with NA, a label."""
    rng = np.random.default_rng(seed)
    cols = {"Date": [f"2008-12-{1 + i % 28:02d}" for i in range(n)],
            "MinTemp": [f"{v:.1f}" for v in rng.normal(12, 5, n)],
            "WindDir": [DIRECTIONS[i] for i in rng.integers(0, 5, n)],
            "Humidity": [f"{v:.0f}" for v in rng.uniform(20, 100, n)]}
    for i in range(0, n, 37):
        cols["MinTemp"][i] = "NA"
    for i in range(5, n, 53):
        cols["WindDir"][i] = "NA"
    if unseen:
        cols["WindDir"][0] = unseen
    humid = np.array([float(h) for h in cols["Humidity"]])
    wet = [h + (25 if d in ("S", "W") else 0) > 75 for h, d in zip(humid, cols["WindDir"])]
    if label:
        cols["RainTomorrow"] = ["Yes" if w else "No" for w in wet]
    names = [c for c in (order or list(cols)) if c not in drop]
    path.write_text(",".join(names) + "\n" + "".join(
        ",".join(cols[c][i] for c in names) + "\n" for i in range(n)))
    return path


@pytest.fixture
def files(tmp_path):
    return {"train": _weather(tmp_path / "train.csv", 300, 0),
            "test": _weather(tmp_path / "test.csv", 120, 2),
            "model": tmp_path / "m.ksm", "dir": tmp_path}


def _fit(files, *extra):
    return main(["fit", str(files["train"]), "--label-column", "RainTomorrow",
                 "--drop-columns", "Date", "-o", str(files["model"]), "--no-progress", *extra])


def test_load_table_kinds_missing_and_selection(files):
    table = load_table(files["train"], label="RainTomorrow", drop_columns=["Date"])
    assert table.names == ["MinTemp", "WindDir", "Humidity"]
    assert table.kinds == ["numeric", "text", "numeric"]
    assert table.missing() == {"MinTemp": 9, "WindDir": 6}
    assert table.others == ["Date"] and set(table.y) == {"Yes", "No"}
    chosen = load_table(files["train"], columns=["Humidity", "MinTemp"], label="RainTomorrow")
    assert chosen.names == ["Humidity", "MinTemp"] and chosen.to_array().dtype == float
    for flag, kwargs in (("--columns", {"columns": ["Nope"]}),
                         ("--drop-columns", {"drop_columns": ["Nope"]}),
                         ("--label-column", {"label": "Nope"})):
        with pytest.raises(ValueError, match=f"{flag}: .* no column 'Nope'; its columns: "
                                             "Date, MinTemp, WindDir, Humidity, RainTomorrow"):
            load_table(files["train"], **kwargs)


def test_the_newcomer_path_fit_then_predict_without_pandas(files, capsys):
    # a date, "NA" cells and a text column: fit encodes and imputes, says so in one line,
    # and the model file applies the same to new data in any column order, without labels
    assert _fit(files) == 0
    printed = capsys.readouterr()
    # one line per kind of column (the Python API's TabularEncoder's report)
    for line in ("columns: 3 features (2 numeric, 1 text)",
                 "  numeric: 2 columns: MinTemp, Humidity",
                 "  text one-hot: 1 column: WindDir (5 values)",
                 "  missing cells imputed: MinTemp (9), WindDir (6)", "  not used: Date"):
        assert line in printed.err.splitlines(), printed.err
    model = load_model(files["model"])
    assert [name for name, _ in model.steps] == ["columns", "model"]
    new = _weather(files["dir"] / "new.csv", 40, 1, label=False,
                   order=["Humidity", "WindDir", "Date", "MinTemp"])
    assert main(["predict", str(files["model"]), str(new)]) == 0
    lines = capsys.readouterr().out.split()
    assert len(lines) == 40 and set(lines) <= {"Yes", "No"}
    # the same rows with the label column, and in the training order: the same predictions
    same = _weather(files["dir"] / "same.csv", 40, 1)
    assert main(["predict", str(files["model"]), str(same)]) == 0
    assert capsys.readouterr().out.split() == lines
    assert main(["evaluate", str(files["model"]), str(files["test"])]) == 0
    accuracy = float(capsys.readouterr().out.split("accuracy: ")[1].split()[0])
    assert accuracy > 0.8


def test_predict_refuses_columns_that_differ_naming_them(files, capsys):
    assert _fit(files) == 0
    capsys.readouterr()
    fewer = _weather(files["dir"] / "fewer.csv", 30, 1, drop=("Humidity",))
    assert main(["predict", str(files["model"]), str(fewer)]) == 2
    err = capsys.readouterr().err
    assert "missing Humidity" in err and "pass data with the columns MinTemp, WindDir, " \
        "Humidity" in err
    renamed = files["dir"] / "renamed.csv"
    renamed.write_text(_weather(files["dir"] / "x.csv", 30, 1).read_text()
                       .replace("Humidity", "Humid", 1))
    assert main(["predict", str(files["model"]), str(renamed)]) == 2
    err = capsys.readouterr().err
    assert "missing Humidity" in err and "not in training: Humid" in err


@pytest.mark.parametrize("mode", ["warn", "refuse"])
def test_a_category_training_never_saw(files, capsys, mode):
    assert _fit(files, "--unknown-categories", mode) == 0
    capsys.readouterr()
    new = _weather(files["dir"] / "new.csv", 30, 1, label=False, unseen="SSW")
    status = main(["predict", str(files["model"]), str(new)])
    err = capsys.readouterr().err
    assert "WindDir: 1 rows ('SSW')" in err
    assert status == (0 if mode == "warn" else 2)


def test_missing_cells_refused_lists_every_column(files, capsys):
    assert _fit(files, "--missing", "refuse") == 2
    err = capsys.readouterr().err
    assert "missing values in 2 columns: MinTemp (9), WindDir (6)" in err
    assert not files["model"].exists()


def test_ordinal_and_column_selection(files, capsys):
    assert _fit(files, "--ordinal", "WindDir") == 0
    assert "text as ranks: 1 column: WindDir (5 values)" in capsys.readouterr().err
    assert _fit(files, "--ordinal", "Humidity") == 2
    assert "not a text column" in capsys.readouterr().err
    assert main(["fit", str(files["train"]), "--label-column", "RainTomorrow", "--columns",
                 "Humidity,WindDir", "-o", str(files["model"]), "--no-progress"]) == 0
    assert "not used: Date, MinTemp" in capsys.readouterr().err


def test_table_options_on_a_file_without_header_are_refused(tmp_path, capsys):
    plain = tmp_path / "plain.csv"
    np.savetxt(plain, np.c_[np.random.default_rng(0).normal(size=(50, 2)), np.arange(50) % 2],
               delimiter=",")
    assert main(["fit", str(plain), "--drop-columns", "a", "-o", str(tmp_path / "m.ksm"),
                 "--no-progress"]) == 2
    assert "--drop-columns names columns of a CSV with a header" in capsys.readouterr().err


def test_tune_reads_the_table_too(files, capsys):
    assert main(["tune", str(files["train"]), "--label-column", "RainTomorrow",
                 "--drop-columns", "Date", "--families", "exact-svm", "--cv", "3", "-o",
                 str(files["model"]), "--no-progress"]) == 0
    assert "text one-hot: 1 column: WindDir" in capsys.readouterr().err
    new = _weather(files["dir"] / "new.csv", 20, 1, label=False)
    assert main(["predict", str(files["model"]), str(new)]) == 0
    assert len(capsys.readouterr().out.split()) == 20


def test_tune_names_the_learned_widths_by_column(files, capsys):
    # regression: the widths were listed as x0, x1, ... after the columns were encoded,
    # so a user could not tell which column (or which category) mattered
    assert main(["tune", str(files["train"]), "--label-column", "RainTomorrow",
                 "--drop-columns", "Date", "--families", "exact-svm", "--cv", "3",
                 "--learn-widths", "yes", "-o", str(files["model"]), "--no-progress"]) == 0
    out = capsys.readouterr().out
    listed = out[out.index("features by relevance"):]
    assert "Humidity" in listed and "WindDir=" in listed and " x0 " not in listed


def test_a_date_column_becomes_cycles_not_thousands_of_one_hot_columns(files, capsys):
    # issue 45: a date column was one-hot encoded (3,410 columns, 6.8 GB on a weather table)
    assert main(["fit", str(files["train"]), "--label-column", "RainTomorrow", "-o",
                 str(files["model"]), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "  dates (year, day of year and weekday as cycles): 1 column: Date" in err
    model = load_model(files["model"])
    assert model[0].n_features_out_ == 1 + 5 + 5 + 1  # MinTemp, WindDir, Date, Humidity
    new = _weather(files["dir"] / "new.csv", 20, 1, label=False)
    assert main(["predict", str(files["model"]), str(new)]) == 0
    assert len(capsys.readouterr().out.split()) == 20


def test_a_numeric_csv_is_standardised_as_the_python_api_encodes_a_table(tmp_path):
    """Regression: the CLI kept a headed CSV's numbers raw (an RBF on pressures near 1,000
    beside 0 / 1 columns, gamma="scale" 1.7e-07) where the Python API standardised them."""
    import pandas as pd

    from kernelscale.datasets import TabularEncoder

    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"pressure": rng.normal(1000.0, 8.0, n),
                          "flag": rng.integers(0, 2, n).astype(float)})
    frame["label"] = np.where((frame["pressure"] - 1000.0) / 8.0 + frame["flag"] > 0.5,
                              "yes", "no")
    path = tmp_path / "raw.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "m.ksm"
    assert main(["fit", str(path), "--label-column", "label", "--model", "kernel-svc",
                 "-o", str(out), "--no-progress"]) == 0
    model = load_model(out)
    encoder = model[0]
    assert isinstance(encoder, TabularEncoder) and encoder.scale == "standard"
    encoded = encoder.transform(frame[["pressure", "flag"]].to_numpy(dtype=object))
    np.testing.assert_allclose(encoded.std(axis=0), 1.0, rtol=1e-6)
    # the same table through the Python API's encoder gives the same columns
    api = TabularEncoder().fit(frame[["pressure", "flag"]])
    np.testing.assert_allclose(api.transform(frame[["pressure", "flag"]]), encoded, rtol=1e-6)
