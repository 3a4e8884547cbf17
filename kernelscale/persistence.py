"""Model files: a fitted estimator with a versioned, checksummed header, written atomically.

A model file is three parts:

1. the magic line ``KERNELSCALE-MODEL``;
2. one line of JSON: the format version, the kernelscale / scikit-learn / NumPy
   versions that wrote it, the estimator class, the payload's length and SHA-256,
   and free-form metadata (the command line stores how its data were read);
3. the payload: the estimator serialized by joblib (zlib-compressed).

The header is read and the checksum verified *before* anything is unpickled, so a
foreign, truncated or corrupt file fails with a clear message instead of an
unpickling error deep inside joblib. Unpickling still executes code: load model
files only from sources you trust, as with any pickle.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import platform
import sys
import tempfile
import threading
import types
import warnings
from pathlib import Path

import joblib
import numpy as np
import sklearn

__all__ = ["FORMAT_VERSION", "ModelFileError", "save_model", "load_model", "read_model_header"]

MAGIC = b"KERNELSCALE-MODEL\n"
FORMAT_VERSION = 1
_MAX_HEADER = 1 << 20


#: the modules files written by kernelscale 0.1 name (the estimators before issue 37
#: grouped them by family), and the modules their classes live in now
MOVED_MODULES = {
    "kernelscale.models._kernel_svm": ["kernelscale.models.svm._kernel_svc"],
    "kernelscale.models._kernel_svr": ["kernelscale.models.svm._kernel_svr",
                                       "kernelscale.models.svm._kernel_one_class"],
    "kernelscale.models._exact_base": ["kernelscale.models.svm._exact_base"],
    "kernelscale.models._svm": ["kernelscale.models.linear._approx_svc"],
    "kernelscale.models._approx_svr": ["kernelscale.models.linear._approx_svr",
                                       "kernelscale.models.linear._approx_one_class"],
    "kernelscale.models._ridge": ["kernelscale.models.linear._approx_ridge"],
    "kernelscale.models._linear_svm": ["kernelscale.models.linear._linear_svc"],
    "kernelscale.models._logistic": ["kernelscale.models.linear._logistic"],
    "kernelscale.models._doubly_sgd": ["kernelscale.models.linear._doubly_sgd"],
    "kernelscale.models._frequency_blocks": ["kernelscale.models.linear._frequency_blocks"],
    "kernelscale.models._falkon": ["kernelscale.models.ridge._falkon"],
    "kernelscale.models._falkon_settings": ["kernelscale.models.ridge._falkon_settings"],
    "kernelscale.models._unsupervised": ["kernelscale.models.unsupervised._pca_kmeans"],
    "kernelscale.models._matrix_svm": ["kernelscale.solvers._svm_path"],
    "kernelscale.models._binary_problems": ["kernelscale.solvers._svm_problems"],
    "kernelscale.model_selection._widths": ["kernelscale.models.metric._widths"],
    "kernelscale.model_selection._metric": ["kernelscale.models.metric._metric"],
}
_ALIASES_LOCK = threading.Lock()


class _moved_modules:
    """While unpickling, the old module names resolve to where their classes are now.

    Each old name is a stand-in module in ``sys.modules`` whose attributes are looked
    up in the new modules, and is removed afterwards (one load at a time holds them).
    """

    def __enter__(self):
        import importlib

        # the new homes are imported before the lock: a failing import leaves no lock held
        homes_of = {old: [importlib.import_module(name) for name in new]
                    for old, new in MOVED_MODULES.items()}
        _ALIASES_LOCK.acquire()
        self.added = []
        for old, homes in homes_of.items():
            if old in sys.modules:
                continue
            stand_in = types.ModuleType(old)

            def lookup(name, homes=homes, old=old):
                for home in homes:
                    if hasattr(home, name):
                        return getattr(home, name)
                raise AttributeError(f"module {old!r} has no attribute {name!r}")

            stand_in.__getattr__ = lookup
            sys.modules[old] = stand_in
            self.added.append(old)
        return self

    def __exit__(self, *exc):
        for old in self.added:
            sys.modules.pop(old, None)
        _ALIASES_LOCK.release()
        return False


class ModelFileError(ValueError):
    """A file is not a readable kernelscale model file (foreign, truncated, corrupt, newer)."""


def _version():
    from . import __version__

    return __version__


def _check_fitted(estimator):
    """Refuse an unfitted estimator: a model file of one would load and then fail to predict."""
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if not isinstance(estimator, BaseEstimator):
        return  # not an estimator scikit-learn can judge; written as given
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise ValueError(f"save_model: this {type(estimator).__name__} is not fitted; call "
                         "fit(X, y) before saving it.") from None


def save_model(estimator, path, *, metadata=None):
    """Write a fitted estimator to ``path`` atomically (temporary file, then rename).

    Parameters
    ----------
    estimator : estimator
        A fitted estimator (an unfitted scikit-learn estimator is refused), or
        any other picklable object.
    path : str or Path
        Destination; its directory must exist. An existing file is replaced
        only once the new one is completely written.
    metadata : dict, default=None
        JSON-serializable facts to keep with the model (e.g. how the training
        data were read).

    Returns
    -------
    header : dict
        The header written (see :func:`read_model_header`).

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import make_classification
    >>> from kernelscale import LinearSVC, load_model, save_model
    >>> X, y = make_classification(200, random_state=0)
    >>> clf = LinearSVC(random_state=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = save_model(clf, os.path.join(d, "clf.ksm"), metadata={"note": "toy"})
    ...     again = load_model(os.path.join(d, "clf.ksm"))
    >>> bool((again.predict(X) == clf.predict(X)).all())
    True
    """
    _check_fitted(estimator)
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise FileNotFoundError(f"Cannot write {str(path)!r}: directory {str(directory)!r} "
                                "does not exist.")
    buffer = io.BytesIO()
    joblib.dump(estimator, buffer, compress=("zlib", 3))
    payload = buffer.getvalue()
    header = {
        "format": "kernelscale-model",
        "format_version": FORMAT_VERSION,
        "kernelscale_version": _version(),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "estimator": type(estimator).__name__,
        "estimator_module": type(estimator).__module__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "payload_bytes": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        "metadata": metadata or {},
    }
    try:
        header_line = json.dumps(header, allow_nan=False).encode() + b"\n"
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metadata must be JSON-serializable: {exc}") from exc
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC)
            fh.write(header_line)
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return header


def _read_parts(path):
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No model file at {str(path)!r}.")
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a directory, not a model file.")
    with open(path, "rb") as fh:
        magic = fh.read(len(MAGIC))
        if magic != MAGIC:
            hint = (" (it looks like a plain pickle / joblib file; kernelscale model files "
                    "are written by kernelscale.save_model or `kernelscale fit -o`)"
                    if magic[:1] in (b"\x80", b"x") else "")
            raise ModelFileError(f"{path}: not a kernelscale model file{hint}.")
        line = fh.readline(_MAX_HEADER)
        try:
            header = json.loads(line)
            if not isinstance(header, dict) or header.get("format") != "kernelscale-model":
                raise ValueError("not a kernelscale header")
            version = int(header["format_version"])
            size = int(header["payload_bytes"])
            digest = str(header["payload_sha256"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            raise ModelFileError(f"{path}: the model file header is corrupt.") from None
        if version > FORMAT_VERSION:
            raise ModelFileError(
                f"{path}: model file format {version} was written by kernelscale "
                f"{header.get('kernelscale_version', '?')}; this kernelscale ({_version()}) "
                f"reads format {FORMAT_VERSION} and older. Upgrade kernelscale."
            )
        payload = fh.read(size + 1)
    return path, header, payload, size, digest


def read_model_header(path):
    """Return the header of a model file without unpickling the estimator.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    header : dict
        ``format_version``, ``kernelscale_version``, ``sklearn_version``,
        ``numpy_version``, ``python_version``, ``estimator``, ``created``,
        ``payload_bytes``, ``payload_sha256`` and ``metadata``.
    """
    return _read_parts(path)[1]


def load_model(path, *, return_header=False):
    """Read an estimator written by :func:`save_model`.

    The header and the payload's checksum are verified before unpickling.
    Unpickling can run code: only load files from trusted sources.

    Parameters
    ----------
    path : str or Path
    return_header : bool, default=False
        Also return the header dict.

    Returns
    -------
    estimator : estimator
    header : dict
        Only when ``return_header`` is True.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ModelFileError
        A foreign, truncated or corrupt file, or one of a newer format.
    """
    path, header, payload, size, digest = _read_parts(path)
    if len(payload) != size:
        raise ModelFileError(
            f"{path}: the model file is {'truncated' if len(payload) < size else 'too long'} "
            f"({len(payload)} payload bytes, the header announces {size}); write it again."
        )
    if hashlib.sha256(payload).hexdigest() != digest:
        raise ModelFileError(f"{path}: the model file is corrupt (checksum mismatch); "
                             "write it again.")
    if header.get("kernelscale_version") != _version():
        warnings.warn(
            f"{path} was written by kernelscale {header.get('kernelscale_version')}; this is "
            f"kernelscale {_version()}. Predictions may differ; refit to be sure.",
            UserWarning, stacklevel=2,
        )
    try:
        with _moved_modules():
            estimator = joblib.load(io.BytesIO(payload))
    except Exception as exc:  # any unpickling failure means an unusable file
        raise ModelFileError(
            f"{path}: the model cannot be read ({type(exc).__name__}: {exc}); it was written "
            f"by kernelscale {header.get('kernelscale_version', '?')} with scikit-learn "
            f"{header.get('sklearn_version', '?')} (this is kernelscale {_version()}): fit it "
            "again with this version, or load it with the versions that wrote it.") from exc
    return (estimator, header) if return_header else estimator
