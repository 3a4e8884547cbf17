"""An experiment's report: highlights, tables and plots, drawn from its result alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ._runner import KERNELSCALE, SKLEARN

__all__ = ["highlights", "write_report", "load_warning", "PLOTS"]


def load_warning(result):
    """A warning line when the machine was busier than its cores during the run, else None."""
    load = result.get("load") or {}
    readings = [v for v in (load.get("before"), load.get("after")) if v is not None]
    cores = load.get("cores")
    if readings and cores and max(readings) > cores:
        return (f"- **Warning: the machine was busy during this run** (1-minute load average "
                f"{load.get('before'):.2f} before, {load.get('after'):.2f} after, on {cores} "
                "cores): other work shared the CPU, so these ratios are not kernelscale's "
                "alone; run it again on an idle machine.")
    return None


def _peer(record, records):
    """The scikit-learn record compared with a kernelscale one (same family and size)."""
    if record["library"] != KERNELSCALE:
        return None
    for other in records:
        if (other["library"] == SKLEARN and other["family"] == record["family"]
                and other["size"] == record["size"] and other["kind"] == record["kind"]):
            return other
    return None


def _fmt(value, spec):
    return "" if value is None else format(value, spec)


def _ratio_cells(record, records):
    peer = _peer(record, records)
    if peer is None:
        return "", ""
    return (f"{peer['total_s'] / record['total_s']:.1f}x",
            f"{100 * (record['accuracy'] - peer['accuracy']):+.2f}")


def _table(records, all_records, *, train):
    head = "| model | train rows | accuracy |" + (" train accuracy |" if train else "")
    head += " fit s | predict s | fit+predict s | kernel error | speed-up vs scikit-learn " \
            "| accuracy vs scikit-learn (points) |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in records:
        speed, gain = _ratio_cells(r, all_records)
        name = r["label"] if r["size"] is None else f"{r['label']}, D={r['size']}"
        cells = [name, str(r["train_rows"]), f"{r['accuracy']:.4f}"]
        if train:
            cells.append(_fmt(r.get("train_accuracy"), ".4f"))
        cells += [f"{r['fit_s']:.2f}", f"{r['predict_s']:.2f}", f"{r['total_s']:.2f}",
                  _fmt(r.get("approx_error"), ".4f"), speed, gain]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def highlights(result):
    """The report's highlight lines (markdown bullets) for a :func:`run_experiment` result."""
    records = result["records"]
    refs = [r for r in records if r["kind"] == "reference"]
    sweep = [r for r in records if r["kind"] == "sweep"]
    warning = load_warning(result)
    lines = [warning] if warning else []
    exact = next((r for r in refs if r["library"] == SKLEARN and r["family"] == "exact"), None)
    ours = [r for r in sweep if r["library"] == KERNELSCALE]
    theirs = [r for r in sweep if r["library"] == SKLEARN]
    if ours and theirs:
        best_ours = max(ours, key=lambda r: (r["accuracy"], -r["total_s"]))
        best_theirs = max(theirs, key=lambda r: (r["accuracy"], -r["total_s"]))
        for r, who in ((best_ours, "kernelscale"), (best_theirs, "scikit-learn")):
            lines.append(f"- Most accurate {who} approximate model: {r['label']}, D={r['size']}: "
                         f"accuracy {r['accuracy']:.4f} in {r['total_s']:.2f} s fit+predict.")
        # the cheapest kernelscale model at least as accurate as scikit-learn's best
        matches = [r for r in ours if r["accuracy"] >= best_theirs["accuracy"] - 1e-12]
        if matches:
            fast = min(matches, key=lambda r: r["total_s"])
            lines.append(
                f"- Fastest kernelscale model at least as accurate as scikit-learn's best: "
                f"{fast['label']}, D={fast['size']} ({fast['accuracy']:.4f}), speed-up "
                f"{best_theirs['total_s'] / fast['total_s']:.1f}x."
            )
        ratios = [(_peer(r, records), r) for r in ours]
        ratios = [theirs_r["total_s"] / r["total_s"] for theirs_r, r in ratios if theirs_r]
        if ratios:
            lines.append(f"- Same model and D, kernelscale vs scikit-learn fit+predict speed-up: "
                         f"median {np.median(ratios):.1f}x (range {min(ratios):.1f}x to "
                         f"{max(ratios):.1f}x over {len(ratios)} pairs).")
        if exact is not None:
            lines.append(
                f"- Versus scikit-learn's exact SVC ({exact['accuracy']:.4f} in "
                f"{exact['total_s']:.2f} s on {exact['train_rows']} rows): kernelscale's most "
                f"accurate approximate model: speed-up "
                f"{exact['total_s'] / best_ours['total_s']:.1f}x, "
                f"{100 * (best_ours['accuracy'] - exact['accuracy']):+.2f} points."
            )
    for r in refs:
        peer = _peer(r, records)
        if peer is not None:
            lines.append(f"- {r['label']} vs {peer['label']}: {r['accuracy']:.4f} vs "
                         f"{peer['accuracy']:.4f}, speed-up {peer['total_s'] / r['total_s']:.1f}x.")
    return lines


PLOTS = {
    "accuracy": "accuracy_vs_features.png",
    "time": "time_vs_features.png",
    "error": "approx_error_vs_features.png",
}


def write_report(result, out_dir):
    """Write ``report.md``, ``results.json`` and the plots of ``result`` into ``out_dir``.

    Parameters
    ----------
    result : dict
        Output of :func:`run_experiment`.
    out_dir : str or Path
        Created if missing.

    Returns
    -------
    paths : dict
        ``report``, ``results`` and one entry per plot.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": out / "results.json", "report": out / "report.md"}
    paths["results"].write_text(json.dumps(result, indent=1))
    for key, name in PLOTS.items():
        if _plot(result, key, out / name):
            paths[key] = out / name
    records = result["records"]
    refs = [r for r in records if r["kind"] == "reference"]
    train = any("train_accuracy" in r for r in records)
    m = result["machine"]
    lines = [
        f"# kernelscale bench {result['experiment']}: {result['title']}",
        "",
        f"- Command: `{result['command'] or 'kernelscale bench ' + result['experiment']}`",
        f"- Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, "
        f"SciPy {m['scipy']}, scikit-learn {m['sklearn']}, kernelscale {m['kernelscale']}",
        f"- Date: {result['created']}; total wall time {result['wall_s']:.0f} s",
        _load_line(result),
        f"- Data: {result['data']['description']}; train {result['data']['train_shape'][0]} x "
        f"{result['data']['train_shape'][1]}, test {result['data']['test_rows']} rows",
        f"- RBF kernel, gamma = {result['gamma']:.6g} for every model; every number is the "
        f"median of {result['repeats']} run(s), the libraries interleaved in each run.",
        "- Speed-up = scikit-learn's fit+predict seconds / kernelscale's (below 1: kernelscale "
        "is slower), for the same model and number of features D (landmarks m for Nystroem); "
        "kernel error = "
        "||K - ZZ^T||_F / ||K||_F on test rows.",
    ]
    lines += [f"- {note}" for note in result["notes"]]
    lines += ["", "## Highlights", "", *highlights(result), "",
              "## Reference models", "", *_table(refs, records, train=train)]
    if result.get("highlight"):
        picks = [r for r in records if r["kind"] == "sweep"
                 and result["highlight"].get(r["family"]) == r["size"]]
        lines += ["", "## The source document's configuration", "",
                  *_table(refs + picks, records, train=train)]
    lines += ["", "## Accuracy and time vs number of features", ""]
    for size in result["sizes"]:
        rows = [r for r in records if r["kind"] == "sweep" and r["size"] == size]
        lines += _table(rows, records, train=train)[(0 if size == result["sizes"][0] else 2):]
    lines += ["", "## Plots", ""]
    lines += [f"![{key}]({path.name})" for key, path in paths.items() if key in PLOTS]
    paths["report"].write_text("\n".join(lines) + "\n")
    return paths


def _load_line(result):
    load = result.get("load")
    if not load or load.get("before") is None:
        return "- Load: not recorded"
    return (f"- Load: 1-minute load average {load['before']:.2f} before and "
            f"{load['after']:.2f} after the run, on {load['cores']} cores")


_COLORS = ["C0", "C1", "C2", "C3", "C4", "C5", "C6"]
_REF_STYLES = [("black", "--"), ("black", ":"), ("0.5", "--"), ("0.5", ":"), ("C7", "-."),
               ("C8", "-."), ("C9", "-.")]


def _plot(result, what, path):
    records = result["records"]
    key = {"accuracy": "accuracy", "time": "total_s", "error": "approx_error"}[what]
    sweep = [r for r in records if r["kind"] == "sweep" and key in r]
    if not sweep:
        return False
    fig = Figure(figsize=(9, 6.4), layout="constrained")
    ax = fig.subplots()
    labels = list(dict.fromkeys(r["label"] for r in sweep))
    # a scikit-learn model takes the colour of the kernelscale model of its family:
    # kernelscale solid with filled circles, scikit-learn dashed with hollow
    # squares drawn on top, so that identical curves stay visible
    colors, family_color = {}, {}
    for r in sorted(sweep, key=lambda r: r["library"] != KERNELSCALE):
        if r["label"] not in colors:
            if r["library"] == KERNELSCALE or r["family"] not in family_color:
                colors[r["label"]] = _COLORS[len(set(colors.values())) % len(_COLORS)]
                family_color.setdefault(r["family"], colors[r["label"]])
            else:
                colors[r["label"]] = family_color[r["family"]]
    for label in labels:
        rows = sorted((r for r in sweep if r["label"] == label), key=lambda r: r["size"])
        ours = rows[0]["library"] == KERNELSCALE
        color = colors[label]
        ax.plot([r["size"] for r in rows], [r[key] for r in rows], color=color,
                ls="-" if ours else "--", lw=2.2 if ours else 1.2,
                marker="o" if ours else "s", ms=7 if ours else 8,
                mfc=color if ours else "none", zorder=2 if ours else 3, label=label)
    if what != "error":
        refs = [r for r in records if r["kind"] == "reference"]
        n_train = result["data"]["train_shape"][0]
        for k, r in enumerate(refs):
            color, ls = _REF_STYLES[k % len(_REF_STYLES)]
            value = f"{r[key]:.4f}" if what == "accuracy" else f"{r[key]:.2f} s"
            rows = f", {r['train_rows']} training rows" if r["train_rows"] < n_train else ""
            ax.axhline(r[key], color=color, ls=ls, lw=1.2, label=f"{r['label']} ({value}{rows})")
    ax.set_xscale("log")
    sizes = sorted({r["size"] for r in sweep})
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("number of features D (landmarks m for Nystroem), log scale")
    if what == "accuracy":
        ax.set_ylabel("test accuracy (median)")
        ax.set_title(f"{result['title']}: test accuracy vs number of features")
    elif what == "time":
        ax.set_yscale("log")
        ax.set_ylabel("fit + predict seconds (median, log scale)")
        ax.set_title(f"{result['title']}: fit + predict time vs number of features")
    else:
        ax.set_yscale("log")
        ax.set_ylabel(r"relative kernel error $\|K - ZZ^T\|_F / \|K\|_F$")
        ax.set_title(f"{result['title']}: kernel approximation error vs D")
    ax.grid(True, which="both", alpha=0.3)
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    fig.savefig(path, dpi=110)
    return True
