"""The metamorphic invariance table of the float verdicts.

    python benchmarks/invariance.py [--per-cell N] [--seed S] [--ids ID ...]
                                    [--transforms NAME ...] [--jobs J] [--json PATH]

For every result and every transform that is a symmetry of it, ``N`` sampled
exact instances are transformed, made exactly representable in binary64, and
every atom is decided exactly and in floats on the same transformed instance
(``allornone.theorems.engine.invariance``). One line per cell: agree / contradict /
undecided, float errors, instances that could not be made representable, the
separated ones and how many of those were undecided, and how many exact
verdicts moved under a transform declared a symmetry (a defect of the harness,
expected 0).

Exit status: 0 when no float verdict contradicted an exact one, no float
computation raised and no exact verdict moved; 1 otherwise; 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import sys

from allornone.errors import AllOrNoneError
from allornone.theorems.engine import invariance as inv


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cell", type=int, default=250, help="transformed instances per cell (default 250)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", nargs="+", default=None, help="result ids (default: all)")
    parser.add_argument("--transforms", nargs="+", default=None, metavar="NAME",
                        help="transform names, quoted (default: all): " + "; ".join(t.name for t in inv.TRANSFORMS))
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the full report as JSON")
    args = parser.parse_args(argv)
    if args.per_cell < 1 or args.jobs < 1:
        parser.error("--per-cell and --jobs must be >= 1")
    try:
        inv.cells(args.ids, args.transforms)
    except (ValueError, AllOrNoneError) as exc:
        parser.error(str(exc))
    report = inv.run(args.ids, args.transforms, per_cell=args.per_cell, seed=args.seed, jobs=args.jobs)
    print(inv.format_table(report))
    t = report["totals"]
    print(f"\n{t['checked']} transformed instances checked in {report['elapsed_s']:.1f} s; "
          f"{t['contradict']} contradicted ({t['contradict_separated']} where separated), {t['error']} raised; "
          f"undecided where separated: "
          f"{t['undecided_separated']} of {t['separated']} ({100 * t['undecided_separated_rate']:.1f}%); "
          f"{t['not representable']} not representable, {t['skipped']} skipped")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, default=str)
    return 0 if t["contradict"] == 0 and t["error"] == 0 and t["exact_changed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
