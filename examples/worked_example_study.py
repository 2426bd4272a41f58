"""Every number of docs/worked-example.md, from the commands the page shows.

    python examples/worked_example_study.py OUT [--figure-data docs/figures/worked/worked-study.json]

In OUT/tiny_lm: ``allornone extract`` on the two tiny GPT-2 seeds over the
held-out contexts, ``allornone make`` for three controls of seed 0 (a
reparametrisation, a B.5 twin, a perturbed copy), and ``allornone study`` on
``examples/worked_study_tiny_lm.toml``. In OUT/textgenrnn: the same controls and
study for textgenrnn's head (``examples/worked_study_textgenrnn.toml``). Each
study's report is written as JSON and Markdown beside its plots. With
``--figure-data``, the numbers the page's figure is drawn from (each
category's observed mean cosines, the null's 95th percentile, the canonical
correlations) are written there for ``docs/figures/make_figures.py``.
Needs the hf extra (``pip install -e ".[hf]"``) for the extraction.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CONTEXTS = DATA / "tiny_lm_contexts.txt"


def run(*args: str, cwd: Path) -> str:
    """One ``allornone`` command, echoed with what it prints."""
    print("$ allornone " + " ".join(args), flush=True)
    out = subprocess.run([sys.executable, "-c", "from allornone.theorems.engine.cli import main; main()", *args],
                         cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    print(out, flush=True)
    return out


def controls(cwd: Path, head: str, token: str, bias: bool) -> None:
    common = ["--features", f"{head}:features", "--head", f"{head}:weight"] + (["--bias", "bias"] if bias else [])
    run("make", "reparam", *common, "--condition", "10", "--out", "reparam.npz", cwd=cwd)
    run("make", "twin", *common, "--extra-dim", "8", *(["--rank-rtol", "1e-9"] if bias else []), "--out",
        "twin.npz", cwd=cwd)
    run("make", "perturb", *common, "--tokens", f"{head}:tokens", "--token", token, "--amount", "0.5",
        "--out", "perturbed.npz", cwd=cwd)


def study(cwd: Path, toml: str) -> dict:
    shutil.copy(ROOT / "examples" / toml, cwd / toml)
    run("study", toml, "--json", "study.json", "--report", "study.md", "--plot", "plots", cwd=cwd)
    from allornone.numeric.study import load_study

    # the same study in Python, for the null's quantiles the figure draws (the report holds the means)
    r = load_study(cwd / toml).run()
    return {"models": r.models,
            "categories": [{"category": p["category"], "pairs": p["pairs"], "agreement": p["agreement"],
                            "agreement_p_value": p["agreement_p_value"],
                            "models": {m: {"cos_logodds_mean": v["cos_logodds_mean"],
                                           "cos_raw_mean": v["cos_raw_mean"], "p_value": v["p_value"],
                                           "null_q95": float(np.quantile(r.null_means[p["category"]][m]["logodds"],
                                                                         0.95))}
                                       for m, v in p["models"].items()}}
                           for p in r.parallelism],
            "canonical_correlations": {f"{d['a']} vs {d['b']}": d["canonical_correlations"] for d in r.distances}}


def main(out: Path, figure_data: Path | None) -> None:
    tiny, lstm = out / "tiny_lm", out / "textgenrnn"
    tiny.mkdir(parents=True, exist_ok=True)
    lstm.mkdir(parents=True, exist_ok=True)
    for seed in ("seed0", "seed1"):
        run("extract", "--model", str(DATA / f"tiny_lm_{seed}"), "--texts", str(CONTEXTS), "--out", f"{seed}.npz",
            cwd=tiny)
    controls(tiny, "seed0.npz", "Ġthe", bias=False)
    data = {"tiny_lm": study(tiny, "worked_study_tiny_lm.toml")}
    shutil.copy(DATA / "textgenrnn_head.npz", lstm / "lstm.npz")
    controls(lstm, "lstm.npz", "e", bias=True)
    data["textgenrnn"] = study(lstm, "worked_study_textgenrnn.toml")
    if figure_data:
        figure_data.parent.mkdir(parents=True, exist_ok=True)
        figure_data.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"figure data written to {figure_data}")


if __name__ == "__main__":
    args = sys.argv[1:]
    fig = None
    if "--figure-data" in args:
        i = args.index("--figure-data")
        fig = Path(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    main(Path(args[0]), fig)
