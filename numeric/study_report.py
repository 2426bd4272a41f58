r"""The report of a study (:mod:`allornone.numeric.study`): the Markdown page
and the figures -- a heatmap of the distances between models, each category's
cosines against its null, and the spectra of canonical correlations.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from allornone.errors import InputFormatError
from allornone.files import replacing
from allornone.numeric.study import StudyResult, _fmt


# -- report and plots --------------------------------------------------------------

def render_markdown(r: StudyResult) -> str:
    """The study as a Markdown document."""
    out = ["# Study", "", "## Findings", ""]
    out += [f"- {line}" for line in r.summary]
    out += ["", "## Models", "", "| model | contexts | tokens | d | bias |", "| --- | --- | --- | --- | --- |"]
    for n in r.models:
        s = r.shapes.get(n, {})
        out.append(f"| {n} | {s.get('m', '')} | {s.get('n', '')} | {s.get('d', '')} | "
                   f"{'yes' if s.get('bias') else 'no'} |")
    if r.distances:
        out += ["", "## Distances", "",
                "KL in nats, both ways (a‖b / b‖a); JS in nats; the centred distance is the RMS over contexts and "
                "tokens of the difference of log-probabilities, each context's mean over tokens removed.", "",
                "| a | b | KL mean | KL max | JS mean | TV mean | TV max | max abs ΔL | centred | d_LLV | k | "
                "smallest canonical corr. (context / token) | EL1 / EL2 / EL3 |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        undecided = [_k_undecided(i) for i in r.details] if len(r.details) == len(r.distances) else \
            [False] * len(r.distances)
        for d, open_k in zip(r.distances, undecided):
            mark = "?" if open_k else ""
            cc = d["canonical_correlations"]
            ct = d["canonical_correlations_token"]
            el = d["el_residuals"]
            out.append(f"| {d['a']} | {d['b']} | {_fmt(d['kl_mean'][0])} / {_fmt(d['kl_mean'][1])} | "
                       f"{_fmt(d['kl_max'][0])} / {_fmt(d['kl_max'][1])} | {_fmt(d['js_mean'])} | "
                       f"{_fmt(d['tv_mean'])} | {_fmt(d['tv_max'])} | {_fmt(d['max_abs_log_odds_diff'])} | "
                       f"{_fmt(d['centred_log_odds_distance'])} | {_fmt(d['llv_distance'])} | {d['k']}{mark} | "
                       f"{_fmt(cc[-1] if cc else None, 6)} / {_fmt(ct[-1] if ct else None, 6)} | "
                       f"{_fmt(el['EL1'], 2)} / {_fmt(el['EL2'], 2)} / {_fmt(el['EL3'], 2)} |")
        notes = ["- k? : k is undecided on a's L (a singular value lies in the band between the zero bound and gap "
                 "times it)"] if any(undecided) else []
        notes += [f"- {i['a']} vs {i['b']}: d_LLV undefined ({i['llv']['undefined']})" for i in r.details
                 if "undefined" in i["llv"]]
        notes += [f"- {i['a']} vs {i['b']}: d_LLV = max(T1 {_fmt(i['llv']['t1'])}, T2 {_fmt(i['llv']['t2'])}, "
                  f"λT3, λT4), pivot `{i['llv']['pivot_token']}`, left out `{i['llv']['left_out_token']}`, "
                  f"{i['llv']['triples']} input sets ({i['llv']['draws']}); {i['k_label']}"
                  for i in r.details if "undefined" not in i["llv"]]
        out += [""] + notes
    out += ["", "## Parallelism", "",
            "Mean cosine over each category's distinct pairs of pairs: identified (log-odds over the contexts), "
            "centred (each log-odds difference's mean over the contexts removed) and raw (R^d); p-values from "
            f"{r.null['draws']} random categories of as many pairs (seed {r.null['seed']})."]
    for e in r.parallelism:
        out += ["", f"### {e['category']} ({e['pairs']} pairs)", ""]
        pairs = r.pairs.get(e["category"], [])
        if pairs:
            out.append("Pairs: " + ", ".join(f"`{a}`−`{b}`" for a, b in pairs[:20])
                       + (f", … ({len(pairs)} in all)" if len(pairs) > 20 else ""))
            out.append("")
        out += ["| model | identified | p | centred | p (centred) | raw |", "| --- | --- | --- | --- | --- | --- |"]
        for n, v in e["models"].items():
            out.append(f"| {n} | {_fmt(v['cos_logodds_mean'], 4)} | {_fmt(v['p_value'])} | "
                       f"{_fmt(v['cos_centred_mean'], 4)} | {_fmt(v['p_value_centred'])} | "
                       f"{_fmt(v['cos_raw_mean'], 4)} |")
        if e["agreement"] is not None:
            out += ["", f"Agreement across models: {_fmt(e['agreement'], 4)} (p = {_fmt(e['agreement_p_value'])})."]
    out += ["", "## Settings", "", f"- null: {r.null['draws']} draws, seed {r.null['seed']}",
            f"- alpha: {r.alpha:g}", f"- elapsed: {r.elapsed_s:.2f} s",
            "- versions: " + ", ".join(f"{k} {v}" for k, v in r.versions.items()), ""]
    return "\n".join(out)


def _k_undecided(info: dict) -> bool:
    """Whether a pair's ``details`` entry labels its k undecided (``Spectra.k_label``)."""
    return "(undecided" in str(info.get("k_label", ""))


def plot_study(r: StudyResult, directory) -> list[Path]:
    """Heatmaps of the distances, each category's mean cosines against the null,
    and the canonical correlations (angle spectra), as PNG files in ``directory``."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputFormatError("plots need matplotlib (pip install 'allornone[plot]')") from None
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputFormatError(f"{directory}: cannot be made ({exc})") from None
    # every file name checked before the first is written
    names = ["distances.png", "angles.png"] * bool(r.distances) + \
        [f"parallel_{_slug(e['category'])}.png" for e in r.parallelism]
    for name in names:
        if (directory / name).is_dir():
            raise InputFormatError(f"{directory / name}: is a folder, where a plot is to be written")
    written = []

    def save(fig, name):
        path = directory / name
        try:
            fig.tight_layout()
            with replacing(path) as tmp:
                fig.savefig(tmp, dpi=110)
        except OSError as exc:
            raise InputFormatError(f"{path}: cannot be written ({exc})") from None
        finally:
            plt.close(fig)
        written.append(path)

    K = len(r.models)
    if r.distances:
        metrics = [("KL mean, (a‖b + b‖a)/2", lambda d: 0.5 * sum(d["kl_mean"])), ("JS mean", lambda d: d["js_mean"]),
                   ("TV mean", lambda d: d["tv_mean"]), ("max |ΔL|", lambda d: d["max_abs_log_odds_diff"]),
                   ("centred log-odds distance", lambda d: d["centred_log_odds_distance"]),
                   ("d_LLV", lambda d: d["llv_distance"])]
        fig, axes = plt.subplots(2, 3, figsize=(3.6 * 3, 3.2 * 2 + 0.3 * K))
        pos = {n: i for i, n in enumerate(r.models)}
        for ax, (title, get) in zip(axes.flat, metrics):
            M = np.full((K, K), np.nan)
            np.fill_diagonal(M, 0.0)
            for d in r.distances:
                v = get(d)
                M[pos[d["a"]], pos[d["b"]]] = M[pos[d["b"]], pos[d["a"]]] = np.nan if v is None else v
            im = ax.imshow(M, cmap="viridis")
            ax.set_xticks(range(K), r.models, rotation=45, ha="right", fontsize=7)
            ax.set_yticks(range(K), r.models, fontsize=7)
            top = np.nanmax(M) if np.isfinite(M).any() else 0.0
            for (i, j), v in np.ndenumerate(M):
                # dark text on the bright end of viridis, light text on the dark end
                colour = "k" if top > 0 and np.isfinite(v) and v > 0.6 * top else "w"
                ax.text(j, i, _fmt(float(v), 2), ha="center", va="center", fontsize=6, color=colour)
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, fraction=0.046)
        save(fig, "distances.png")

    for e in r.parallelism:
        cat = e["category"]
        fig, axes = plt.subplots(2, K, figsize=(3.2 * K, 5.2), squeeze=False)
        for col, n in enumerate(r.models):
            for row, (form, key, word) in enumerate((("logodds", "cos_logodds_mean", "identified"),
                                                      ("centred", "cos_centred_mean", "centred"))):
                ax = axes[row][col]
                null = r.null_means[cat][n][form]
                ax.hist(null[np.isfinite(null)], bins=40, color="0.7")
                obs = e["models"][n][key]
                if obs is not None and np.isfinite(obs):
                    ax.axvline(obs, color="C3", lw=2)
                p = e["models"][n]["p_value" if form == "logodds" else "p_value_centred"]
                ax.set_title(f"{n}: {word}, p = {_fmt(p)}", fontsize=8)
                ax.set_xlabel("mean cosine over pairs of pairs", fontsize=7)
        fig.suptitle(f"{cat}: observed (red) against {r.null['draws']} random categories", fontsize=10)
        save(fig, f"parallel_{_slug(cat)}.png")

    if r.distances:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
        for d in r.distances:
            label = f"{d['a']} / {d['b']}"
            for ax, key in ((a1, "canonical_correlations"), (a2, "canonical_correlations_token")):
                v = d[key]
                if v:
                    ax.plot(np.arange(1, len(v) + 1), v, lw=1.3, label=label)
        for ax, side in ((a1, "context"), (a2, "token")):
            ax.set_title(f"canonical correlations, {side} side (at k)", fontsize=9)
            ax.set_xlabel("i")
            ax.set_ylabel("cos θ_i")
            ax.legend(fontsize=7)
        save(fig, "angles.png")
    return written


def _slug(text: str) -> str:
    s = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in text).strip("-")
    return s or "category"


