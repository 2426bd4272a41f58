"""Figures of the documentation, drawn from what the package computes.

``python docs/figures/make_figures.py [OUTDIR]`` writes every image the site
shows into ``OUTDIR`` (``docs/figures/generated`` by default):

* ``equivalent-models.svg`` (home page): a model in ``d = 2`` and its
  Appendix B.5 twin side by side, from exact instances. Each panel shows the
  context embeddings ``f(x)`` (dots), the lines ``M`` and ``N``, and two
  unembedding differences with their projections onto ``N`` (dotted). In the
  model the differences lie in ``N`` and are parallel; in the twin a hidden
  token coordinate moves them off ``Ñ`` and they are not, while their
  projections onto ``Ñ`` still are (Lemma 8: a property of the distribution;
  Theorem 15: only parallelism inside ``N`` is shared).
* ``real-models-spectra.png`` (real trained models): the spectra of the two
  trained heads under ``tests/data`` and the ``k`` chosen for each.
* ``dependency-graph.svg`` and ``dependency-status.md``
  (``dependency_graph.py``).

Every matplotlib figure passes :func:`figure_layout.check` before it is saved (no text
overlaps another, leaves its axes or leaves the figure), so a figure whose
labels collide stops the site build.
"""
from __future__ import annotations

import functools
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import figure_layout  # noqa: E402

COLOURS = ("#d62728", "#2ca02c")


# -- the home page: a model and its B.5 twin ------------------------------------------------------------------------

def instance():
    """The model and its twin (exact), and the token pairs drawn.

    The model has ``SF = span(e_1)`` and ``SG = span((1, 1))``, so ``M`` and
    ``N`` are two different lines and every difference ``g(a) - g(b)`` lies in
    ``N``. The twin (Appendix B.5, one hidden token coordinate ``psi``) has
    ``SG~ = R^2`` and ``M~ = Ñ = span(e_1)``: its differences leave ``Ñ``."""
    from allornone.symbolic import generators as gen
    from allornone.symbolic.model import ExactModel

    F = [[3, 0], [Fraction(-5, 2), 0], [Fraction(5, 2), 0]]
    G = [[0, 0], [1, 1], [2, 2], [-1, -1], [Fraction(1, 2), Fraction(1, 2)]]
    model = ExactModel(F, G, 0)
    psi = {1: -1, 2: 1, 3: 1, 4: 0}
    # T = 2 undoes the scale of the rational basis U = (1/2, 0) of M: f~(x) = f(x)
    twin = gen.b5_twin(model, a=0, b=1, T=[[2]], R=[[1, 0], [0, 1]], c=[0, 0],
                       psi=lambda y, g0, b: [Fraction(psi[y])])
    return model, twin, ((2, 0), (3, 4))


#: Where each difference's label goes, by panel and pair: an offset in points
#: from the arrow's tip, and the alignment; the layout check keeps them apart.
LABELS = {False: (((-4, 7), "right", "bottom"), ((6, -4), "left", "top")),
          True: (((-4, 7), "right", "bottom"), ((4, 7), "left", "bottom"))}


def _parallel(u, v) -> bool:
    return abs(u[0] * v[1] - u[1] * v[0]) < 1e-12


def _equivalent_models_facts(model, twin, pairs):
    """What the figure shows, checked on the instance it is drawn from."""
    import numpy as np

    assert model.log_odds() == twin.log_odds(), "the two panels must show models with the same distribution"
    assert model.structure.basis_M.shape[1] == 1 and not _parallel(
        model.structure.basis_M.to_numpy()[:, 0], model.structure.basis_N.to_numpy()[:, 0]), "M and N differ"
    out = {}
    for name, m in (("model", model), ("twin", twin)):
        G, PN = m.G.to_numpy(), m.structure.P_N.to_numpy()
        diffs = [G[a] - G[b] for a, b in pairs]
        out[name] = (_parallel(*diffs), _parallel(*(PN @ d for d in diffs)),
                     all(np.allclose(PN @ d, d) for d in diffs))
    assert out["model"] == (True, True, True), "in the model the differences lie in N and are parallel"
    assert out["twin"] == (False, True, False), "in the twin they leave N~, and only their projections are parallel"


def _panel(ax, model, pairs, title: str, tilde: bool):
    import numpy as np

    s = model.structure
    F, G, PN = model.F.to_numpy(), model.G.to_numpy(), s.P_N.to_numpy()
    lim = 3.4
    t = r"\tilde " if tilde else ""
    lines = [(s.basis_M, "-", f"${t}M$"), (s.basis_N, "--", f"${t}N$")]
    vM, vN = (b.to_numpy()[:, 0] / np.linalg.norm(b.to_numpy()[:, 0]) for b in (s.basis_M, s.basis_N))
    if _parallel(vM, vN):
        lines = [(s.basis_M, "-", f"${t}M = {t}N$")]
    for basis, style, label in lines:
        v = basis.to_numpy()[:, 0]
        v = v / np.linalg.norm(v) * (1 if v[np.argmax(np.abs(v))] > 0 else -1)
        end = lim / max(abs(v[0]), abs(v[1]))
        ax.plot([-end * v[0], end * v[0]], [-end * v[1], end * v[1]], style, color="0.45", lw=1.1, zorder=1)
        # near the line's end, on the side towards the middle of the panel
        steep = abs(v[1]) > abs(v[0]) / 2
        ax.annotate(label, 0.9 * end * v, xytext=(-7, 0) if steep else (0, -8), textcoords="offset points",
                    ha="right", va="center" if steep else "top", fontsize=11, color="0.2")
    ax.scatter(F[:, 0], F[:, 1], s=26, facecolors="white", edgecolors="#1f77b4", linewidths=1.4, zorder=2)
    g = r"\tilde g" if tilde else "g"
    for (a, b), colour, (offset, ha, va) in zip(pairs, COLOURS, LABELS[tilde]):
        diff = G[a] - G[b]
        proj = PN @ diff
        ax.annotate("", xy=proj, xytext=(0, 0), zorder=3,
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=2.2, ls=(0, (1, 1.6)), shrinkA=0, shrinkB=0))
        if not np.allclose(proj, diff):
            ax.plot([diff[0], proj[0]], [diff[1], proj[1]], ls=(0, (2, 2)), color=colour, lw=0.8, zorder=2)
        ax.annotate("", xy=diff, xytext=(0, 0), zorder=4,
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.3, shrinkA=0, shrinkB=0))
        ax.annotate(f"${g}(y_{a}) - {g}(y_{b})$", diff, xytext=offset, textcoords="offset points", ha=ha, va=va,
                    fontsize=9, color=colour)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.9", lw=0.6, zorder=0)
    ax.axvline(0, color="0.9", lw=0.6, zorder=0)
    ax.set_title(title, fontsize=10)


def draw_equivalent_models():
    """The home page's figure (a matplotlib Figure, not saved)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    model, twin, pairs = instance()
    _equivalent_models_facts(model, twin, pairs)
    fig, axes = plt.subplots(1, 2, figsize=(9, 5.2), layout="constrained")
    _panel(axes[0], model, pairs, f"$(f, g)$: $d = {model.d}$, $k = {model.effective_complexity()}$", False)
    _panel(axes[1], twin, pairs, rf"B.5 twin $(\tilde f, \tilde g)$: $\tilde d = {twin.d}$, "
           rf"$\tilde k = {twin.effective_complexity()}$", True)
    handles = [Line2D([], [], ls="", marker="o", markerfacecolor="white", markeredgecolor="#1f77b4", label="$f(x)$"),
               Line2D([], [], ls="-", color="0.45", label="$M$"), Line2D([], [], ls="--", color="0.45", label="$N$"),
               Line2D([], [], ls="-", color="0.25", lw=1.3, label="$g(a) - g(b)$"),
               Line2D([], [], ls=(0, (1, 1.6)), color="0.25", lw=2.2, label="its projection onto $N$")]
    fig.legend(handles=handles, loc="outside lower center", ncol=5, fontsize=9, frameon=False)
    fig.suptitle(r"The same distribution: $L = \tilde L$", fontsize=11)
    return fig


# -- real trained models: spectra -----------------------------------------------------------------------------------

#: The fixtures and the tolerance of docs/real-models.md (and of its worked example).
REAL_MODELS = ("textgenrnn", "langid")
RANK_RTOL = 1e-9


@functools.lru_cache(maxsize=None)
def real_model_spectra() -> dict:
    """``name -> Spectra`` of each trained head under ``tests/data``, at ``rank_rtol = 1e-9``."""
    from allornone.numeric import Tolerance, spectra
    from allornone.numeric.loaders import load_head

    out = {}
    for name in REAL_MODELS:
        path = ROOT / "tests" / "data" / f"{name}_head.npz"
        model = load_head(f"{path}:features", f"{path}:weight", bias="bias", contexts=f"{path}:contexts",
                          tokens=f"{path}:tokens")
        out[name] = spectra.analyse(model, Tolerance(rank_rtol=RANK_RTOL))
    return out


def draw_real_models_spectra():
    """The spectra figure of docs/real-models.md: the singular values of ``L``,
    ``F`` and ``G_0`` relative to the largest, the ``k`` chosen for each model,
    the band where ``k`` is undecided, and the principal cosines of ``SF`` and
    ``SG``. Every label is in a legend below its panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    items = real_model_spectra()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 5.4), width_ratios=[3, 2], layout="constrained")
    for j, (name, sp) in enumerate(items.items()):
        colour = f"C{j}"
        for vals, style, label in ((sp.sigma_L, "-", "L"), (sp.sigma_F, "--", "F"), (sp.sigma_G0, ":", "G_0")):
            if vals.size and vals[0] > 0:
                v = np.maximum(vals / vals[0], 1e-17)
                ax.semilogy(np.arange(1, v.size + 1), v, style, color=colour, lw=1.4,
                            label=rf"{name}: $\sigma({label}) / \sigma_1$")
        if sp.k:
            ax.axvline(sp.k + 0.5, color=colour, lw=0.9, alpha=0.8, ls="-.",
                       label=f"{name}: $k = {sp.k}$ ({sp.k_method})")
        if sp.cosines.size:
            ax2.plot(np.arange(1, sp.cosines.size + 1), sp.cosines, color=colour, lw=1.4, label=name)
        lo, hi = sp.band
        if lo > 0:
            ax.axhspan(lo, min(hi, 1.0), color=colour, alpha=0.10, lw=0)
    ax.set_xlabel("$i$")
    ax.set_ylabel(r"$\sigma_i / \sigma_1$")
    ax.set_ylim(1e-17, 2)
    ax.set_title("singular values (shaded: the band where $k$ is undecided)", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    ax2.set_xlabel("$i$")
    ax2.set_ylabel("cosine")
    ax2.set_ylim(-0.02, 1.02)
    ax2.set_title(r"principal cosines of $SF$ and $SG$ ($\sigma$ of $P_F P_G$)", fontsize=10)
    ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
    fig.suptitle("two real trained softmax heads", fontsize=11)
    return fig


#: Written by examples/worked_example_study.py (--figure-data): the numbers the worked example's figure draws.
WORKED_DATA = HERE / "worked" / "worked-study.json"


def draw_worked_study():
    """The figure of docs/worked-example.md: for each category, each model's mean
    identified cosine beside the null's 95th percentile, and the canonical
    correlations of seed 0 with seed 1 and with its controls."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    data = json.loads(WORKED_DATA.read_text(encoding="utf-8"))["tiny_lm"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 5.4), width_ratios=[3, 2], layout="constrained")
    cats = data["categories"]
    models = data["models"]
    width = 0.8 / len(models)
    for j, name in enumerate(models):
        x = np.arange(len(cats)) + (j - (len(models) - 1) / 2) * width
        obs = [c["models"][name]["cos_logodds_mean"] for c in cats]
        q95 = [c["models"][name]["null_q95"] for c in cats]
        ax.bar(x, obs, width * 0.9, color=f"C{j}", label=name)
        ax.plot(x, q95, "k_", ms=10, mew=1.5, label="null, 95th percentile" if j == 0 else None)
    ax.set_xticks(np.arange(len(cats)), [f"{c['category']} ({c['pairs']})" for c in cats], fontsize=9)
    ax.set_ylabel("mean identified cosine")
    ax.set_title("each category against 1000 random categories", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, frameon=False)
    for j, (pair, cc) in enumerate(data["canonical_correlations"].items()):
        if pair.startswith("seed0 vs"):
            ax2.plot(np.arange(1, len(cc) + 1), cc, lw=1.4, color=f"C{j}", label=pair)
    ax2.set_xlabel("$i$")
    ax2.set_ylabel("cosine")
    ax2.set_ylim(-0.02, 1.05)
    ax2.set_title("canonical correlations of the context subspaces at $k$", fontsize=10)
    ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
    fig.suptitle("two tiny GPT-2 seeds and three controls of seed 0", fontsize=11)
    return fig


# -- writing --------------------------------------------------------------------------------------------------------

#: Every matplotlib figure of the site: file name -> function drawing it.
MATPLOTLIB_FIGURES = {"equivalent-models.svg": draw_equivalent_models,
                      "real-models-spectra.png": draw_real_models_spectra,
                      "worked-study.png": draw_worked_study}
#: Every image the site shows (``figures/generated/NAME``).
OUTPUTS = (*MATPLOTLIB_FIGURES, "dependency-graph.svg")


def save(fig, path: Path) -> Path:
    """Check the figure's layout, then write it (reproducibly: no date, fixed ids)."""
    import matplotlib
    import matplotlib.pyplot as plt

    try:
        figure_layout.check(fig, path.name)
        matplotlib.rcParams["svg.hashsalt"] = "allornone"
        metadata = {"Date": None} if path.suffix == ".svg" else {"Software": None}
        fig.savefig(path, metadata=metadata, dpi=110)
    finally:
        plt.close(fig)
    return path


def main(outdir: Path | None = None, graph: bool = True) -> list[Path]:
    outdir = Path(outdir) if outdir else HERE / "generated"
    outdir.mkdir(parents=True, exist_ok=True)
    written = [save(draw(), outdir / name) for name, draw in MATPLOTLIB_FIGURES.items()]
    if graph:
        from dependency_graph import write_graph

        written += write_graph(outdir)
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(p)
