"""The worked example of docs/real-models.md, on the fixtures under tests/data.

    python examples/real_models/worked_example.py [OUT_FOLDER]

For each real model (textgenrnn's LSTM language model, langid.py's language
identifier): its spectra and decided k, then the graded comparison with an
exact reparametrisation ``F A, G A^-T``, with a B.5 twin (a larger model with the
same distribution) and with a copy whose bias of one token moved by 1e-3; then
graded parallelism of token pairs in N and raw, in the model and in its twin,
and steering / relational linearity on token-defined readouts. Writes
``real-models.json`` and the spectra plot ``real-models-spectra.png``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from allornone.numeric import FloatModel, Tolerance, graded, scale, spectra
from allornone.numeric.loaders import load_head

ROOT = Path(__file__).resolve().parents[2]
#: Ranks by rounding leave the LSTM's k undecided (sigma_293 is 1.4e-12 of
#: sigma_1); a modelling tolerance decides it. Residuals keep the default rtol.
TOL = Tolerance(rtol=1e-6, rank_rtol=1e-9)
DATA = ROOT / "tests" / "data"

PAIRS = {
    "textgenrnn": [(("a", "A"), ("e", "E")), (("t", "T"), ("s", "S")), (("o", "O"), ("i", "I")),
                   (("1", "2"), ("2", "3")), ((".", ","), ("!", "?")), (("»", "<pad>"), ("イ", "<pad>")),
                   (("a", "A"), ("a", "A"))],
    "langid": [(("fr", "it"), ("es", "pt")), (("de", "nl"), ("sv", "da")), (("en", "fr"), ("en", "de")),
               (("ru", "uk"), ("pl", "cs")), (("gu", "af"), ("kn", "af")), (("hi", "af"), ("mr", "af")),
               (("fi", "et"), ("fi", "et"))],
}


def load(name: str) -> FloatModel:
    path = DATA / f"{name}_head.npz"
    return load_head(f"{path}:features", f"{path}:weight", bias="bias", contexts=f"{path}:contexts",
                     tokens=f"{path}:tokens")


def variants(model: FloatModel, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    A = scale.well_conditioned(model.d, rng)
    rep = FloatModel(model.F @ A, model.G @ np.linalg.inv(A).T, model.pivot, model.contexts, model.tokens)
    F2, G2 = scale.b5_twin(np.asarray(model.F), np.asarray(model.G), model.pivot, extra=(8, 8), seed=rng)
    twin = FloatModel(F2, G2, model.pivot, model.contexts, model.tokens)
    G3 = np.array(model.G)
    G3[model.tokens.index(" " if " " in model.tokens else "en"), -1] += 1e-3  # the bias coordinate
    pert = FloatModel(model.F, G3, model.pivot, model.contexts, model.tokens)
    return {"reparametrisation": rep, "B.5 twin": twin, "bias + 1e-3 on one token": pert}


def steering_pairs(model: FloatModel) -> list:
    """Context pairs (s, s + ' '): consecutive prefixes of the text where the next character is a space."""
    ctx = model.contexts
    return [(i, i + 1) for i in range(len(ctx) - 1) if ctx[i + 1].endswith(" ") and ctx[i + 1][:-1].endswith(
        ctx[i][-min(len(ctx[i]), 30):])]


def main(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    report, plots = {}, {}
    for name in ("textgenrnn", "langid"):
        model = load(name)
        fac = spectra.factor(model)
        sp = spectra.analyse(model, TOL, factored=fac)
        plots[name] = sp
        entry = {"shape": [model.m, model.n, model.d], "spectra": sp.to_json(),
                 "spectra_by_rounding": spectra.analyse(model, factored=fac).to_json(),
                 "spectra_largest_gap": spectra.analyse(model, cut="largest-gap", factored=fac).to_json(),
                 "compare": {}, "parallel": {}}
        vs = variants(model)
        for label, other in vs.items():
            entry["compare"][label] = graded.compare(model, other, TOL).to_json()
        rows = graded.parallel_table(model, PAIRS[name], TOL)
        twin_rows = graded.parallel_table(vs["B.5 twin"], PAIRS[name], TOL)
        entry["parallel"] = [{"model": r, "twin": t} for r, t in zip(rows, twin_rows)]
        if name == "textgenrnn":
            pairs = steering_pairs(model)
            readouts = [("T", "t"), ("a", "e"), ("i", "s")]
            entry["steering"] = graded.steering(model, pairs, readouts, TOL)
            entry["relational"] = graded.readout_linearity(model, pairs, readouts, tol=TOL)
            entry["relational_k10"] = graded.readout_linearity(model, pairs, readouts, tol=TOL, k=10)
            entry["relational_any"] = graded.readout_linearity(model, pairs, readouts, reading="any", tol=TOL)
        report[name] = entry
    (out / "real-models.json").write_text(json.dumps(report, indent=1) + "\n")
    spectra.plot_spectra(plots, out / "real-models-spectra.png", title="two real trained softmax heads")
    print(f"wrote {out / 'real-models.json'} and {out / 'real-models-spectra.png'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("."))
