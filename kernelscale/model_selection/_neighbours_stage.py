"""The search's neighbours stage: where the exact SVM won the challenge, its C and gamma
moved on the first fold while the time left pays for the fits and the refit.

The challenger's configuration comes from the family screen, a grid on a few
thousand rows; on every row the best ``C`` is usually larger (more rows pin the
function down) and the best gamma may move. After the challenger is refitted (the
model held), the stage moves ``C`` by sqrt(10) (up, then down where up did not
help) while each move scores higher on the first fold's held-out rows, then gamma
by 2 the same way, at most :data:`NEIGHBOUR_FITS` fits. Each is priced from the
challenger's measured fold fit (its cost grows about as ``sqrt(C)`` and with
gamma), beside the refit of the best of them on every row; the best is refitted
and held where it scored higher than the challenger. On the planted-subspace table
the search ended in 97-102 s of 5 and 10 minutes with the screen's ``C`` and gamma
(0.9915), where a 2-minute run's screen had found better ones (0.99325).
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import get_scorer

from .._clock import now
from ._families import classifier_model
from ._first_model import describe, model_on
from ._refit import settings_on_fold
from ._state import Candidate

__all__ = ["refine_challenger", "NEIGHBOUR_FITS", "neighbour_seconds"]

#: the most fits on the first fold the stage makes
NEIGHBOUR_FITS = 8
#: each move of C, and of gamma
MOVES = (("C", np.sqrt(10.0)), ("gamma", 2.0))

STAGE = "challenger's neighbours"


def neighbour_seconds(seconds, params, point):
    """Seconds a fit of ``point`` is predicted at, from ``seconds`` measured at ``params``:
    an SMO fit's cost grows about as the square root of C (more bounded support vectors
    to move) and with gamma (more support vectors), and is taken as no cheaper below."""
    growth = 1.0
    for key in ("C", "gamma"):
        growth *= max(point[key] / params[key], 1.0) ** 0.5
    return seconds * growth


def refine_challenger(search, state, sched):
    """Around a winning exact-SVM challenger: C, then gamma, moved on the first fold while
    each move scores higher and the time left pays for its fit and the refit."""
    step = getattr(search, "challenger_", None)
    best = state.best
    if (sched.end is None or step is None or not step.get("won") or best is None
            or best.how != "challenger"):
        sched.skip(STAGE, "not needed: the exact SVM's C and gamma are moved where it won the "
                          "challenge under a time budget")
        return
    params = dict(step["params"])
    fold_s, exponent = float(step["seconds"]), float(step["exponent"])
    train, valid = state.train0, state.valid0
    growth = (state.n / train.size) ** exponent

    def price(point):  # its fit on the fold, and its refit on every row
        fit = neighbour_seconds(fold_s, params, point)
        return fit, fit * growth

    data = state.data
    scorer = get_scorer(state.scoring)
    weights = data.sample_weight[train]
    tried, held, held_score = [], params, float(step["score"])
    with sched.stage(STAGE) as run:
        fold_settings = settings_on_fold(state)
        fits = 0
        for key, factor in MOVES:
            for direction in (factor, 1.0 / factor):
                moved = False
                while fits < NEIGHBOUR_FITS:
                    point = {**held, key: held[key] * direction}
                    fit_s, refit_s = price(point)
                    if now() + fit_s + max(refit_s, price(held)[1]) > run.until:
                        tried.append(f"{_describe(point, key, state)} skipped for time "
                                     f"(predicted {fit_s:.1f} s and its refit {refit_s:.1f} s)")
                        run.outcome = "shrunk"
                        break
                    began = now()
                    model = classifier_model(point, fold_settings)
                    model.fit(data.X[train], data.y[train], sample_weight=weights)
                    score = float(scorer(model, data.X[valid], data.y[valid]))
                    fits += 1
                    state.n_scored += 1
                    tried.append(f"{_describe(point, key, state)}: {score:.4f} in "
                                 f"{now() - began:.1f} s")
                    run.note = _note(step, state, tried)
                    if not score > held_score:
                        break
                    held, held_score, moved = point, score, True
                if moved or fits >= NEIGHBOUR_FITS:
                    break  # up helped: down is not tried (or no fit is left)
        run.note = _note(step, state, tried)
        if held is params:
            return
        model, raw = model_on(search, state, held, state.n)
        model.fit(state.data.columns, data.y, data.sample_weight)
        state.n_scored += 1
        state.consider(Candidate(model, raw, dict(held), held_score, None, state.n,
                                 "challenger's neighbour"))
        run.note += f"; {describe(held, state)} refitted on every row"
        state.choices.append(f"the exact SVM at C={held['C']:.4g} ({describe(held, state)}; "
                             f"first fold {held_score:.4f} against the challenger's "
                             f"{step['score']:.4f})")


def _describe(point, key, state):
    if key == "C":
        return f"C={point['C']:.4g}"
    return f"gamma x {point['gamma'] / state.space.gamma_ref:.3g}"


def _note(step, state, tried):
    return (f"from the challenger ({describe(step['params'], state)}, first fold "
            f"{step['score']:.4f}): " + ", ".join(tried))

