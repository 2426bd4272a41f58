"""Extract langid.py's trained language identifier as a softmax head.

langid.py (PyPI ``langid``, BSD licence) ships its trained model inside the
package: a multinomial naive Bayes classifier over 97 languages whose class
log-probabilities are ``fv(x) @ nb_ptc + nb_pc`` -- a softmax predictor with
``f(x)`` the byte n-gram counts of the text (7480 features) and ``g(y)`` the
per-language log-probabilities of those n-grams, the class prior ``nb_pc`` as a
bias (folded by ``FloatModel.from_head``).

    pip install langid
    python examples/real_models/langid_extract.py tests/data/langid_head.npz

The contexts are the word prefixes of Article 1 of the Universal Declaration of
Human Rights in twelve languages (``udhr_article1.tsv`` beside this file).
To keep the file small, the head is restricted to the n-grams that occur in
these contexts (``--all-features`` keeps all 7480): every other feature has
count 0 in every context, so the log-odds over the contexts -- and so, by
Theorem 5, everything identified -- are those of the full model. Raw-space
statements (raw parallelism) refer to the restricted head.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def contexts(path: Path = HERE / "udhr_article1.tsv") -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        _, text = line.split("\t", 1)
        words = text.split()
        out.extend(" ".join(words[:j]) for j in range(1, len(words) + 1))
    return list(dict.fromkeys(out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--all-features", action="store_true", help="keep all 7480 features (a 5.8 MB head)")
    args = ap.parse_args(argv)
    from langid.langid import LanguageIdentifier, model

    ident = LanguageIdentifier.from_modelstring(model, norm_probs=False)
    texts = contexts()
    X = np.array([ident.instance2fv(t) for t in texts], dtype=np.float64)
    weight = np.asarray(ident.nb_ptc, dtype=np.float64)
    bias = np.asarray(ident.nb_pc, dtype=np.float64).ravel()
    keep = np.arange(X.shape[1]) if args.all_features else np.flatnonzero(X.any(axis=0))
    # the restriction changes no log-odds over these contexts
    full = X @ weight + bias
    part = X[:, keep] @ weight[keep] + bias
    assert np.allclose(full, part, rtol=1e-12, atol=1e-9)
    hits = sum(ident.classify(t)[0] == lang for t, lang in zip(texts, _languages()))
    print(f"{len(texts)} contexts, {len(keep)} of {X.shape[1]} features; language of the whole prefix "
          f"identified for {hits}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, features=X[:, keep], weight=weight[keep], bias=bias,
                        contexts=np.array(texts), tokens=np.array(list(ident.nb_classes)),
                        feature_index=keep)
    print(f"wrote {args.out}: features {X[:, keep].shape}, weight {weight[keep].shape}")


def _languages(path: Path = HERE / "udhr_article1.tsv") -> list[str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            lang, text = line.split("\t", 1)
            words = text.split()
            for j in range(1, len(words) + 1):
                out.setdefault(" ".join(words[:j]), lang)
    return list(out.values())


if __name__ == "__main__":
    main()
