"""``kernelscale fit --stream``: fit from a file read chunk by chunk, a bar of rows per pass."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

from ._options import STREAM_MODELS
from ._output import data_spec, print_fit, save_fit

__all__ = ["run_stream"]


def _counted(inner, bar):
    """A chunked data set that moves ``bar`` as its chunks are read, pass after pass."""
    from ..datasets import ChunkedDataset

    class Counted(ChunkedDataset):
        def __init__(self):
            super().__init__(inner.chunk_rows)
            self.n_features, self.has_labels = inner.n_features, inner.has_labels
            self._n_samples, self.passes = inner._n_samples, 0
            self.rereads = None  # set by the fit's row source after the first pass

        def _chunks(self):
            self.passes += 1
            note = " (re-reading the file: it exceeds the memory budget)" if self.rereads else ""
            bar.set_description_str(f"pass {self.passes}{note}")
            bar.reset(total=self._n_samples)
            for X, y in inner._chunks():
                yield X, y
                bar.update(X.shape[0])

        def head(self, n_rows):
            return inner.head(n_rows)

        def sample(self, n_rows, random_state=None):
            return inner.sample(n_rows, random_state)

        def classes(self):
            return inner.classes()

    return Counted()


def _open(source, args, n_features=None):
    from ..datasets import open_chunks

    path = Path(str(source))
    if not path.is_file():
        raise FileNotFoundError(f"--stream reads files: no file {str(source)!r} (named data "
                                "sets fit in memory; drop --stream for them).")
    fmt = args.format or "auto"
    label_column = -1 if args.label_column is None else args.label_column
    return open_chunks(path, format=fmt, chunk_rows=args.chunk_rows, label_column=label_column,
                       n_features=n_features, memory_budget=args.memory_budget)


def _scores(estimator, data):
    """Accuracy, or R^2 / RMSE / MAE for a regressor, summed chunk by chunk."""
    import numpy as np

    from ._output import task_of

    regression = task_of(estimator) == "regressor"
    sums = np.zeros(5)  # hits or (sum y, sum y^2, squared error, absolute error), rows
    for X, y in data:
        pred = estimator.predict(X)
        if regression:
            y = np.asarray(y, dtype=np.float64)
            err = y - pred
            sums[:4] += (y.sum(), y @ y, err @ err, np.abs(err).sum())
        else:
            sums[0] += np.sum(pred == y)
        sums[4] += X.shape[0]
    n = sums[4]
    if not regression:
        return sums[0] / n, int(n)
    total = sums[1] - sums[0] ** 2 / n
    r2 = 1.0 - sums[2] / total if total > 0 else float("nan")
    return {"r2": float(r2), "rmse": float(np.sqrt(sums[2] / n)),
            "mae": float(sums[3] / n)}, int(n)


def run_stream(args, estimator, output):
    import sys

    from tqdm.auto import tqdm

    from ._output import budget

    if args.model not in STREAM_MODELS:
        raise ValueError(f"--stream is not available for --model {args.model}; use one of "
                         f"{', '.join(STREAM_MODELS)}.")
    if data_spec(args)["format"] == "npz":
        raise ValueError("--stream cannot read .npz archives; save the data as .npy "
                         "(np.save(path, np.column_stack([X, y]))) and stream that.")
    train = _open(args.train, args, n_features=args.n_features)
    test = _open(args.test, args, n_features=train.n_features) if args.test else None
    if test is not None and test.n_features != train.n_features:
        raise ValueError(f"{args.test} has {test.n_features} features but {args.train} has "
                         f"{train.n_features}.")
    timings = {}
    bar = tqdm(total=train._n_samples, unit="row", unit_scale=True, disable=args.no_progress,
               file=sys.stderr, desc="pass 1")
    counted = _counted(train, bar)
    with budget(args), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            estimator.fit(counted)
        finally:
            bar.close()
        timings["fit_s"] = time.perf_counter() - start
        start = time.perf_counter()
        accuracy, n_eval = _scores(estimator, test if test is not None else train)
        timings["predict_s"] = time.perf_counter() - start
        save_fit(args, estimator, output, accuracy, timings,
                 {"n_samples": int(counted.n_samples), "n_features": int(train.n_features),
                  "streamed": True, "chunk_rows": int(train.chunk_rows)})
    passes = f"{counted.passes} pass{'es' if counted.passes != 1 else ''} over the data"
    if counted.rereads is False:
        passes += " (they fit the memory budget: read once, then kept in memory)"
    elif counted.rereads:
        passes += " (they exceed the memory budget: every pass re-read the file)"
    print_fit(caught, [f"train: {args.train}: {counted.n_samples} rows x {train.n_features} "
                       f"features, streamed in chunks of {train.chunk_rows} rows, {passes}"
                       + (f", {len(estimator.classes_)} classes"
                          if hasattr(estimator, "classes_") else ", numeric targets")],
              estimator, f"fit {timings['fit_s']:.2f} s, predict {timings['predict_s']:.2f} s "
              f"({n_eval} rows)", args, accuracy, output)
    return 0
