"""Figures of the documentation, drawn from exact instances built by the package.

``python docs/figures/make_figures.py [OUTDIR]`` writes ``equivalent-models.svg``:
a model in ``d = 2`` and its Appendix B.5 twin side by side. Each panel shows
the context embeddings ``f(x)`` (dots), the lines ``M`` and ``N``, and a pair of
unembedding differences ``g(a) - g(b)``, ``g(c) - g(e)`` with their projections
onto ``N``: the projections are parallel in both models (Lemma 8: a property of
the distribution), the raw differences only in the first (Theorem 15).
"""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent


def instance():
    """The model and its twin (exact), and the token pairs drawn."""
    from allornone.symbolic import generators as gen
    from allornone.symbolic.model import ExactModel

    # SF = span(e_1) and SG = span((1, 1)): M = span(e_1) and N = span((1, 1)) differ.
    F = [[1, 0], [2, 0], [-1, 0], [Fraction(3, 2), 0]]
    G = [[0, 0], [1, 1], [2, 2], [-1, -1], [Fraction(1, 2), Fraction(1, 2)]]
    model = ExactModel(F, G, 0)
    twin = gen.b5_twin(model, a=0, b=1, T=[[1]], R=[[1, 1], [0, 1]], c=[0, 0],
                       psi=lambda y, g0, b: [Fraction((y * y) % 5 - 2)])
    return model, twin, ((2, 0), (1, 3))


def _panel(ax, model, pairs, title):
    import numpy as np

    s = model.structure
    F = model.F.to_numpy()
    G = model.G.to_numpy()
    PN = s.P_N.to_numpy()
    lim = 3.2
    for basis, style, label in ((s.basis_M, "-", "M"), (s.basis_N, "--", "N")):
        v = basis.to_numpy()[:, 0]
        v = v / np.linalg.norm(v)
        ax.plot([-lim * v[0], lim * v[0]], [-lim * v[1], lim * v[1]], style, color="0.35", lw=1.2)
        ax.annotate(label, 0.92 * lim * v, fontsize=11, color="0.2")
    ax.scatter(F[:, 0], F[:, 1], s=28, color="#1f77b4", zorder=3, label="f(x)")
    colors = ("#d62728", "#2ca02c")
    for (a, b), color in zip(pairs, colors):
        diff = G[a] - G[b]
        ax.annotate("", xy=diff, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, lw=1.8))
        proj = PN @ diff
        ax.annotate("", xy=proj, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, lw=1.0, ls=":"))
        ax.text(*(diff * 1.05), f"g({model.tokens[a]})-g({model.tokens[b]})", color=color, fontsize=8)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.6, zorder=0)
    ax.axvline(0, color="0.85", lw=0.6, zorder=0)
    ax.set_title(title, fontsize=10)


def make_equivalent_models(outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, twin, pairs = instance()
    assert model.log_odds() == twin.log_odds(), "the two panels must show equivalent models"
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.4))
    _panel(axes[0], model, pairs, f"(f, g): d = {model.d}, k = {model.effective_complexity()}")
    _panel(axes[1], twin, pairs, f"B.5 twin (f~, g~): d~ = {twin.d}, k~ = {twin.effective_complexity()}")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle("Same distribution (L = L~). Solid: M, dashed: N; dotted arrows: projections onto N",
                 fontsize=10)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "equivalent-models.svg"
    matplotlib.rcParams["svg.hashsalt"] = "allornone"
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


def main(outdir: Path | None = None) -> list[Path]:
    outdir = Path(outdir) if outdir else HERE / "generated"
    sys.path.insert(0, str(HERE))
    from dependency_graph import write_graph

    return [make_equivalent_models(outdir), *write_graph(outdir)]


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(p)
