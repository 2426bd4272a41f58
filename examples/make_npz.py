"""Write examples/two_models.npz: the models of two_models.json as floats, plus
one query, in the .npz layout of docs/file-format.md.

    python examples/make_npz.py && allornone verify examples/two_models.npz
"""
import json
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main(out: Path = HERE / "two_models.npz") -> Path:
    spec = json.loads((HERE / "two_models.json").read_text())
    arrays = {}
    for name, model in spec["models"].items():
        for key in ("F", "G"):
            arrays[f"{name}.{key}"] = np.array([[float(Fraction(v)) for v in row] for row in model[key]])
        arrays[f"{name}.pivot"] = np.array(model.get("pivot", 0))
        arrays[f"{name}.contexts"] = np.array(spec["contexts"])
        arrays[f"{name}.tokens"] = np.array(spec["tokens"])
    arrays["queries"] = np.array(json.dumps([{"kind": "compare", "models": ["a", "b"]}]))
    np.savez(out, **arrays)
    return out


if __name__ == "__main__":
    print(main())
