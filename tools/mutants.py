"""Mutation testing: plant named, realistic bugs one at a time and see which
checks catch them.

Each mutant replaces one snippet of one source file (the snippet must occur
exactly once, so a mutant never silently stops applying). It is applied to a
*temporary copy* of the tree -- the working tree is never touched -- and then

1. ``allornone check --trials T --edges`` runs against the copy (exit status
   other than 0 = killed; the JSON report says which result and which check), and
2. ``pytest`` runs the test files listed with the mutant, plus the mutated file
   (its doctests), stopping at the first failure (``-x``).

The copy is imported through a small package folder of links placed first on
``PYTHONPATH``, so the installed (editable) package is shadowed, not used.

Run from the repository root, in the project's environment::

    python tools/mutants.py                   # every mutant (10 to 40 minutes on 2 shared cores)
    python tools/mutants.py --list            # names, files, equivalence notes
    python tools/mutants.py --only thm5-if-same-sides,b5-T-inverse
    python tools/mutants.py --json mutants.json

The summary gives the share of non-equivalent mutants killed by ``check`` alone
and by the tests. A mutant marked ``equivalent`` changes the code without
changing any behaviour a check can observe; the reason is printed with it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Where each part of the package lives in the tree (pyproject.toml's package-dir).
PACKAGE_DIRS = {"": "core", "symbolic": "symbolic", "numeric": "numeric", "theorems": "theorems"}

T_RECORDS = ("tests/test_steps_can_fail.py", "tests/test_runner_intent.py")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    description: str
    tests: tuple[str, ...] = ()
    equivalent: str | None = None
    """Why no check can tell the mutant from the original (None: it is not equivalent)."""


MUTANTS: list[Mutant] = [
    # -- core/ -----------------------------------------------------------------
    Mutant("model-N-is-M", "core/model.py", "T = P_F @ P_G\n", "T = P_G @ P_F\n",
           "M and N swapped: M taken as Im(P_G P_F)", ("tests/test_facts.py", "tests/test_thm14.py")),
    Mutant("model-pivot-ignored", "core/model.py", "return self.backend.minus_row(self._G, self._pivot)",
           "return self.backend.minus_row(self._G, 0)", "g_0 subtracts g of token 0 whatever the pivot",
           ("tests/test_thm5.py", "tests/test_facts.py", "tests/test_runner_intent.py")),
    Mutant("model-diverse-or", "core/model.py", "ok = self.dim_SF() == self.d and self.dim_SG() == self.d",
           "ok = self.dim_SF() == self.d or self.dim_SG() == self.d", "diversity needs only one of SF, SG = R^d",
           ("tests/test_cor6.py",)),
    Mutant("decision-all-first-only", "core/decision.py", "if Truth.FAILS in truths:",
           "if Truth.FAILS in truths[:1]:", "a conjunction that only looks at its first part for failures",
           ("tests/test_facts.py", "tests/test_thm5.py")),
    # -- symbolic/ -------------------------------------------------------------
    Mutant("exact-projector-orthonormal", "symbolic/linalg.py", "return B.T @ _solve(B @ B.T, B)",
           "return B.T @ B", "the exact projector assumes orthonormal rows (RREF rows are not)",
           ("tests/test_linalg_exact.py", "tests/test_facts.py")),
    Mutant("exact-pinv-factor-dropped", "symbolic/linalg.py", "return R.T @ _solve(R @ R.T, _solve(C.T @ C, C.T))",
           "return R.T @ _solve(C.T @ C, C.T)", "the exact pseudo-inverse forgets (R R^T)^{-1}",
           ("tests/test_linalg_exact.py", "tests/test_thm5.py")),
    Mutant("exact-N-basis-of-M", "symbolic/model.py",
           "image_bases=lambda T, scale=None: (ql.column_basis(T), ql.column_basis(T.T), True)",
           "image_bases=lambda T, scale=None: (ql.column_basis(T), ql.column_basis(T), True)",
           "the exact basis of N is a basis of M", ("tests/test_facts.py", "tests/test_thm14.py")),
    Mutant("b5-T-inverse", "symbolic/generators.py", "G_core = model.G0 @ V @ C.T @ Tinv if k",
           "G_core = model.G0 @ V @ C.T @ Tinv.T if k", "B.5 twin built with T^{-1} instead of T^{-T}",
           ("tests/test_thm5.py", "tests/test_generic.py", "tests/test_proofs.py")),
    Mutant("perturb-changes-nothing", "symbolic/generators.py",
           "u = ql.as_qmatrix([[delta if i == x else 0] for i in range(model.m)])",
           "u = ql.as_qmatrix([[0] for i in range(model.m)])", "a log-odds perturbation that changes nothing",
           ("tests/test_thm5.py",)),
    Mutant("change-of-basis-inverse", "symbolic/generators.py",
           "return ExactModel(model.F @ R.T, model.G @ R.inv(), model.pivot, model.contexts, model.tokens)",
           "return ExactModel(model.F @ R.T, model.G @ R.inv().T, model.pivot, model.contexts, model.tokens)",
           "a change of basis with R^{-1} where R^{-T} belongs", ("tests/test_thm5.py",)),
    Mutant("planting-wrong-lambda-is-right", "symbolic/parallel.py",
           "lam += rng.choice((1, -1, Fraction(1, 2)))", "lam += 0 * rng.choice((1, -1, Fraction(1, 2)))",
           "the 'wrong lambda' kind asks about the planted ratio", ("tests/test_lem8.py",)),
    Mutant("relational-plant-nonlinear", "symbolic/relational.py",
           "ident = [sum(W_c[i][j] * z[j] for j in range(k)) + b_c[i] + off[i] for i in range(k)]",
           "ident = [sum(W_c[i][j] * z[j] * z[j] for j in range(k)) + b_c[i] + off[i] for i in range(k)]",
           "the planted relational linearity is not linear", ("tests/test_thm14.py",)),
    # -- numeric/ --------------------------------------------------------------
    Mutant("float-pinv-numpy-cut", "numeric/linalg.py",
           "    u, s, vt = _svd(X)\n    r = tol.rank(s, size=max(X.shape))[0] if rank is None else int(rank)\n",
           "    u, s, vt = _svd(X)\n    r = int(np.sum(s > 1e-15 * s[0])) if s.size else 0\n",
           "the float pseudo-inverse cuts at NumPy's default instead of the decided rank",
           ("tests/test_float_trap.py", "tests/test_linalg_float.py")),
    Mutant("float-decide-gap-ignored", "numeric/linalg.py",
           "    elif residual > hi:\n        truth = Truth.FAILS",
           "    elif residual > lo:\n        truth = Truth.FAILS", "no undecided band: everything above rtol fails",
           ("tests/test_linalg_float.py", "tests/test_facts.py")),
    Mutant("float-pivot-ignored", "numeric/model.py", "minus_row=lambda X, i: X - X[i],",
           "minus_row=lambda X, i: X - X[0],", "the float g_0 ignores the pivot",
           ("tests/test_linalg_float.py", "tests/test_runner_intent.py")),
    # -- records -----------------------------------------------------------------
    Mutant("thm5-if-same-sides", "theorems/thm5/record.py", "be.vanishes(a.log_odds() - via_cert,",
           "be.vanishes(via_cert - via_cert,", "Theorem 5's step '<=' compares an expression with itself",
           T_RECORDS + ("tests/test_thm5.py",)),
    Mutant("thm5-certificate-B-from-M", "theorems/thm5/__init__.py",
           "B = be.solve_left((a.G0 @ sa.P_N).T, (b.G0 @ sb.P_N).T, sb.k)",
           "B = be.solve_left((a.G0 @ sa.P_N).T, (b.G0 @ sb.P_M).T, sb.k)",
           "B* built from P~_M~ instead of P~_N~", T_RECORDS + ("tests/test_thm5.py", "tests/test_structure_sides.py")),
    Mutant("thm5-el3-tautology", "theorems/thm5/__init__.py",
           "el3 = be.vanishes(sb.P_M @ A.T @ B @ sb.P_N - sb.P_M @ sb.P_N,",
           "el3 = be.vanishes(sb.P_M @ A.T @ B @ sb.P_N - sb.P_M @ A.T @ B @ sb.P_N,",
           "EL3 compared with itself", T_RECORDS + ("tests/test_thm5.py",)),
    Mutant("cor6-A-transposed", "theorems/cor6/__init__.py",
           '        return LinearIdentification(be.decision(True), A0, "an invertible solution was found")',
           '        return LinearIdentification(be.decision(True), A0.T, "an invertible solution was found")',
           "Corollary 6's A transposed", T_RECORDS + ("tests/test_cor6.py",)),
    Mutant("cor6-particular-solution-of-one-condition", "theorems/cor6/__init__.py",
           "        A0 = A1 + Z0 @ KF.T\n", "        A0 = A1\n",
           "Corollary 6's particular A solves A F~^T = F^T only, not G_0 A = G~_0",
           T_RECORDS + ("tests/test_cor6.py",)),
    Mutant("cor6-diverse-twin-is-model", "theorems/cor6/record.py", '"diverse~": b.is_diverse(),\n',
           '"diverse~": a.is_diverse(),\n', "the twin's diversity decided on the model",
           T_RECORDS + ("tests/test_cor6.py",)),
    Mutant("lem8-ratio-inverted", "theorems/lem8/__init__.py", "lam = _scalar(be, u.T @ v) / _scalar(be, v.T @ v)",
           "lam = _scalar(be, v.T @ v) / _scalar(be, u.T @ v)", "lambda's formula inverted",
           T_RECORDS + ("tests/test_lem8.py",)),
    Mutant("lem8-raw-is-N", "theorems/lem8/record.py",
           '"raw": lem8.parallel_on(side, model, ab, ce, "raw", lam).decision,',
           '"raw": lem8.parallel_on(side, model, ab, ce, side.subspace, lam).decision,',
           "raw parallelism decided inside N", T_RECORDS + ("tests/test_lem8.py",)),
    Mutant("lem8-degenerate-scale", "theorems/lem8/__init__.py", "v_zero = be.is_zero(v, scale_v)",
           "v_zero = be.is_zero(v * 0, scale_v)", "the second difference is always taken as degenerate",
           T_RECORDS + ("tests/test_lem8.py",)),
    Mutant("lem8ctx-reader-projector", "theorems/lem8/__init__.py",
           "return structure.P_M if self._tokens else structure.P_N",
           "return structure.P_M if self._tokens else structure.P_M",
           "the context dual reads G_0 through P_M instead of P_N", T_RECORDS + ("tests/test_lem8ctx.py",)),
    Mutant("thm15-twin-raw-on-model", "theorems/thm15/record.py",
           '"raw_parallel~": parallel(b, ab, ce, "raw", lam).decision,',
           '"raw_parallel~": parallel(a, ab, ce, "raw", lam).decision,',
           "Theorem 15's raw parallelism of the twin decided on the model", T_RECORDS + ("tests/test_thm15.py",)),
    Mutant("thm15-diversity-step-twin-is-model", "theorems/thm15/record.py", None, None,
           "Theorem 15's diversity step reads the twin's parallelism in N off the model",
           T_RECORDS + ("tests/test_thm15.py",)),
    Mutant("thm14-transport-P_N", "theorems/thm14/__init__.py",
           "Wt = Pt @ cert.B.T @ result.W @ cert.A @ twin.projector_M",
           "Wt = Pt @ cert.B.T @ result.W @ cert.A @ twin.projector_N",
           "Theorem 14's transport reads the twin through P_N instead of P_M", T_RECORDS + ("tests/test_thm14.py",)),
    Mutant("thm14-gamma-in-M", "theorems/thm14/__init__.py",
           "d = be.vanishes(basis - model.projector_N @ basis, model.projector_N, basis,",
           "d = be.vanishes(basis - model.projector_M @ basis, model.projector_M, basis,",
           "Γ ⊆ N decided as Γ ⊆ M", T_RECORDS + ("tests/test_thm14.py",)),
    Mutant("facts-f3-P_N", "theorems/facts.py", "be.vanishes(s.P_G @ (s.P_F - s.P_M), s.P_G, s.P_F,",
           "be.vanishes(s.P_G @ (s.P_F - s.P_N), s.P_G, s.P_F,", "F3 with P_N where P_M belongs",
           ("tests/test_facts.py",)),
    Mutant("facts-f1-other-product", "theorems/facts.py", "be.rank_equals(s.P_G @ s.P_F, s.k, scale=1.0,",
           "be.rank_equals(s.P_F @ s.P_G, s.k, scale=1.0,", "F1's rank(P_F P_G) = k read on P_F P_G itself",
           ("tests/test_facts.py",),
           equivalent="P_F P_G = (P_G P_F)^T has the same rank and singular values, so the verdict is the same "
                      "on every model, exact or float"),
    Mutant("facts-f2-basis-N", "theorems/facts.py", "be.rank_equals(s.P_N @ s.basis_M, s.k, s.P_N, s.basis_M,",
           "be.rank_equals(s.P_N @ s.basis_N, s.k, s.P_N, s.basis_N,", "F2 tests P_N on a basis of N, not of M",
           ("tests/test_facts.py", "tests/test_steps_can_fail.py")),
    Mutant("b5-construction-C-orthonormal", "theorems/constructions.py",
           "return (U.T @ U).inv() @ U.T @ V @ (V.T @ V).inv()", "return U.T @ V",
           "the construction's C assumes orthonormal bases", ("tests/test_proofs.py",)),
    # -- the runner and the CLI ---------------------------------------------------------
    Mutant("runner-ignores-steps", "theorems/engine/runner.py",
           "ok = (self.statement_failed == 0 and self.contradictions == 0 and self.steps_failed == 0",
           "ok = (self.statement_failed == 0 and self.contradictions == 0",
           "the runner's verdict ignores failed proof steps", ("tests/test_runner_intent.py",)),
    Mutant("runner-ignores-intent", "theorems/engine/runner.py", "got = ex.atoms[name].truth\n",
           "got = Truth.of(value)\n", "the runner never compares an instance with what its sampler built",
           ("tests/test_runner_intent.py",)),
    Mutant("runner-no-contradictions", "theorems/engine/runner.py",
           "if not d.undecided and d.truth is not ex.atoms[n].truth]",
           "if not d.undecided and d.truth is not ex.atoms[n].truth and d.is_exact]",
           "float verdicts are never compared with exact ones", ("tests/test_runner_intent.py", "tests/test_cli.py",
                                                                   "tests/test_crossval.py")),
    Mutant("runner-vacuity-warns", "theorems/engine/runner.py",
           "and self.nonvacuous)", ")", "a vacuous result passes", ("tests/test_runner_intent.py",)),
    Mutant("cli-exit-0", "theorems/engine/cli.py", 'sys.exit(0 if report["verdict"] == "pass" else 1)', "sys.exit(0)",
           "check exits 0 whatever the verdict", ("tests/test_runner_intent.py", "tests/test_cli.py")),
]

# Mutants whose snippet is easier to give here than inline.
_THM15 = ('    inN, inN_t = parallel(a, ab, ce, "N", lam), parallel(b, ab, ce, "N", lam)\n',
          '    inN, inN_t = parallel(a, ab, ce, "N", lam), parallel(a, ab, ce, "N", lam)\n')
MUTANTS = [Mutant(m.name, m.path, *_THM15, m.description, m.tests, m.equivalent) if m.old is None else m
           for m in MUTANTS]

# -- the real-model layer: numeric/graded.py, distances.py, linear_properties.py, spectra.py, loaders.py, gram.py's route
# choice, witness.py; the evidence filters of steering and Theorem 14; the real-model
# self-test (theorems/engine/realmodel_selftest.py), which check runs on all of them
_GRADED = ("tests/test_graded_boundaries.py",)
_SPECTRA = ("tests/test_spectra_boundaries.py",)
_LOADERS = ("tests/test_loaders_boundaries.py",)
_ROUTE = ("tests/test_gram_route_choice.py",)
_WITNESS = ("tests/test_witness_boundaries.py",)
_EVIDENCE = ("tests/test_evidence_filters.py",)
_SELFTEST = ("tests/test_realmodel_selftest.py",)
_THREADS = ("tests/test_threads.py",)
REAL_MODEL_MUTANTS = [
    # -- numeric/graded.py: Wedin's bound ---------------------------------------------------
    Mutant("graded-wedin-own-gap", "numeric/graded.py", "sk1 = sp[k] if k < sp.size else 0.0",
           "sk1 = sq[k] if k < sq.size else 0.0",
           "Wedin's gap taken within the perturbed model (sigma~_k - sigma~_k+1)", _GRADED),
    Mutant("graded-wedin-unperturbed-sigma", "numeric/graded.py", "        sk = sq[k - 1]\n",
           "        sk = sp[k - 1]\n", "Wedin's gap taken within the unperturbed model (sigma_k - sigma_k+1)",
           _GRADED),
    Mutant("graded-wedin-rounding-dropped", "numeric/graded.py", "bound = (residual + rho) / delta",
           "bound = residual / delta", "the rounding level of L left out of Wedin's bound", _GRADED),
    Mutant("graded-wedin-one-role", "numeric/graded.py",
           "for (fp, sp, fq, sq, Eq) in ((fa, sa, fb, sb, E), (fb, sb, fa, sa, -E)):",
           "for (fp, sp, fq, sq, Eq) in ((fa, sa, fb, sb, E),):",
           "Wedin's bound with one role only (the models' roles never swapped)", _GRADED),
    Mutant("graded-wedin-one-residual", "numeric/graded.py",
           "residual = max(_spectral_norm(Eq @ (fq.W_G @ fq.Vt[:k].T)), _spectral_norm(Eq.T @ (fq.W_F @ fq.U[:, :k])))",
           "residual = _spectral_norm(Eq @ (fq.W_G @ fq.Vt[:k].T))",
           "Wedin's residual without ||E^T U~_k||", _GRADED),
    Mutant("graded-joint-one-side-checked", "numeric/graded.py",
           "if fa is not None and fb is not None and fa.W_G is not None and fb.W_G is not None:",
           "if fa is not None and fb is not None and fa.W_G is not None:",
           "factors taken as joint when only the first one is", _GRADED),
    # -- numeric/distances.py ---------------------------------------------------------
    Mutant("graded-kl-twin-normaliser-dropped", "numeric/distances.py", "- lse[0] + lse[1], 0.0)", "- lse[0], 0.0)",
           "KL without the twin's log-normaliser", _GRADED),
    Mutant("graded-tv-without-half", "numeric/distances.py", "tv = 0.5 * D.sum(axis=1) / tot[0]",
           "tv = D.sum(axis=1) / tot[0]",
           "total variation without its factor 1/2", _GRADED),
    Mutant("graded-relative-to-twin", "numeric/distances.py", '_add_sumsq(acc["l2"], La)', '_add_sumsq(acc["l2"], Lb)',
           "the relative distance taken relative to L~", _GRADED),
    Mutant("graded-witness-transposed", "numeric/distances.py", 'acc["where"] = max(hi, -lo), (i + j // n, j % n)',
           'acc["where"] = max(hi, -lo), (i + j % n, j // n)', "the witness's context and token swapped",
           _GRADED),
    # -- numeric/linear_properties.py: graded linear properties ------------------------------------------------
    Mutant("graded-r2-one-mean", "numeric/linear_properties.py", "tot = ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)",
           "tot = ((Y - Y.mean()) ** 2).sum(axis=0)", "R^2 against one mean for every readout", _GRADED),
    Mutant("graded-dof-boundary", "numeric/linear_properties.py", "    if dof <= 0:\n", "    if dof < 0:\n",
           "no degree of freedom left is not vacuous", _GRADED),
    Mutant("graded-dof-intercept-forgotten", "numeric/linear_properties.py", "dof = len(S) - (X.shape[1] if formed is None else r.k + 1)",
           "dof = len(S) - (X.shape[1] if formed is None else r.k + 1) + 1", "the intercept not counted among the columns",
           _GRADED),
    Mutant("graded-undecided-k-either-reading", "numeric/linear_properties.py",
           'elif not r.spectra.k_decided:', 'elif not r.spectra.k_decided or reading == "M":',
           "reading M undecided whatever k", _GRADED),
    Mutant("graded-steering-one-pair", "numeric/linear_properties.py", 'verdict = "vacuous" if len(S) < 2 else',
           'verdict = "vacuous" if len(S) < 1 else', "steering on a single pair is not vacuous", _GRADED),
    Mutant("graded-steering-r2-of-differences", "numeric/linear_properties.py",
           '"shift": [float(x) for x in shift], "r2": _r2(Y, R)',
           '"shift": [float(x) for x in shift], "r2": _r2(D, R)',
           "steering's R^2 against the differences instead of the targets", _GRADED),
    Mutant("graded-lambda-scale", "numeric/linear_properties.py", "lam = float(u @ v) / nv ** 2", "lam = float(u @ v) / nv",
           "the ratio of a parallel pair divided by |v| once", _GRADED),
    Mutant("graded-k-from-twin", "numeric/graded.py", "kk = min(sa.k, fb.s.size)", "kk = min(sb.k, fb.s.size)",
           "the compared k decided on the second model", _GRADED),
    # -- numeric/spectra.py ---------------------------------------------------------------------
    Mutant("spectra-gap-floor-ignored", "numeric/spectra.py", "floor = max(floor, np.finfo(float).tiny)",
           "floor = np.finfo(float).tiny", "the largest gap cut without the noise floor", _SPECTRA),
    Mutant("spectra-gap-off-by-one", "numeric/spectra.py", "return i + 1, float(ratios[i])",
           "return i, float(ratios[i])", "the largest gap one position early", _SPECTRA),
    Mutant("spectra-flat-spectrum", "numeric/spectra.py", "if ratios.size == 0 or ratios.max() <= 1.0:",
           "if ratios.size == 0 or ratios.max() < 1.0:", "a flat spectrum cut after its first value", _SPECTRA),
    Mutant("spectra-profile-inclusive", "numeric/spectra.py", "int(np.sum(s > t * top)) if top > 0 else 0",
           "int(np.sum(s >= t * top)) if top > 0 else 0", "the rank profile counts sigma = tau sigma_1", _SPECTRA),
    Mutant("spectra-noise-floor-min", "numeric/spectra.py", "np.finfo(float).eps * max(shape) * (s[0]",
           "np.finfo(float).eps * min(shape) * (s[0]", "the noise floor at the smallest dimension", _SPECTRA),
    Mutant("spectra-k-at-sigma-1", "numeric/spectra.py",
           "    level = 2.0 * svd_noise(size, S)",
           "    S = float(fac.s_unit[0])\n    level = 2.0 * svd_noise(size, S)",
           "k by rounding at sigma_1(L), not at the column-paired size sum_j |f_j| |g_0j|", _SPECTRA),
    Mutant("spectra-k-zero-against-nothing", "numeric/spectra.py",
           "reference=float(su[0]) + unit_noise if su.size else None)", "reference=None)",
           "k = 0 decided when the zero bound reaches sigma_1 itself", _SPECTRA),
    Mutant("spectra-given-k-range", "numeric/spectra.py", "if not 0 <= int(k) <= s.size:",
           "if not 0 <= int(k) < s.size:", "a given k = min(m, n, d) refused", _SPECTRA),
    Mutant("spectra-sg-cut-at-k", "numeric/spectra.py",
           "r = max(int(np.sum(s > rtol * (s[0] if s.size else 0.0))), k)",
           "r = min(int(np.sum(s > rtol * (s[0] if s.size else 0.0))), k)",
           "N of the truncation from only k directions of SG", _SPECTRA),
    Mutant("spectra-joint-block-drops-a-token", "numeric/factor.py",
           "hi = min(hi0, lo + step)\n            R = _tpqrt(0, R, np.array(block(lo, hi)",
           "hi = min(hi0, lo + step - 1)\n            R = _tpqrt(0, R, np.array(block(lo, hi)",
           "the streamed token QR skips the last token of every block", _SPECTRA),
    Mutant("spectra-cosines-both-empty", "numeric/spectra.py",
           "if not bases[0].shape[0] or not bases[1].shape[0]:",
           "if not bases[0].shape[0] and not bases[1].shape[0]:",
           "the principal cosines skip only when both SF and SG are {0}", _SPECTRA,
           equivalent="with one basis empty the product has no rows or no columns, and its singular values "
                      "are the same empty array the early return gives; the dimensions are returned alike"),
    # -- numeric/threads.py, and the passes on threads ---------------------------------------------
    Mutant("threads-results-as-completed", "numeric/threads.py", "fut = pending.pop(0)", "fut = pending.pop(-1)",
           "a pool's results handed on as the last submitted, not in the tasks' order", _THREADS),
    Mutant("threads-pool-keeps-blas-threads", "numeric/threads.py",
           "    with one_blas_thread(), ThreadPoolExecutor(n) as pool:",
           "    with ThreadPoolExecutor(n) as pool:",
           "a pool's tasks run on every BLAS thread (oversubscribed, and rounding that depends on the count)",
           _THREADS),
    Mutant("graded-distances-merge-drops-a-sum", "numeric/distances.py", 'for key in ("kl_sum", "tv_sum"):',
           'for key in ("kl_sum",):', "the blocks' total variations are not added up", _THREADS),
    Mutant("factor-chunks-not-combined", "numeric/factor.py", "    for R2 in parts[1:]:",
           "    for R2 in parts[1:1]:", "the streamed QR keeps the first chunk's triangle only", _THREADS),
    # -- numeric/loaders.py -----------------------------------------------------------------------
    Mutant("loaders-bias-from-features-file", "numeric/loaders.py", "head_path, _ = split_spec(head)",
           "head_path, _ = split_spec(features)", "a bare --bias KEY read from the features' file", _LOADERS),
    Mutant("loaders-split-at-first-colon", "numeric/loaders.py", 'path, key = spec.rsplit(":", 1)',
           'path, key = spec.split(":", 1)', "FILE:KEY split at the first colon of the path", _LOADERS),
    Mutant("loaders-existing-path-split", "numeric/loaders.py", 'if os.path.exists(spec) or ":" not in spec:',
           'if ":" not in spec:', "an existing file whose name has a colon split as FILE:KEY", _LOADERS),
    Mutant("loaders-bias-file-as-key", "numeric/loaders.py",
           'bare = not (":" in bias or os.path.exists(bias))',
           'bare = ":" not in bias', "a bias file given without key read as a key of the head's file",
           _LOADERS),
    Mutant("loaders-pivot-range", "numeric/loaders.py", "if not 0 <= pivot < n:", "if not 0 <= pivot <= n:",
           "pivot n accepted", _LOADERS),
    Mutant("loaders-integers-refused", "numeric/loaders.py", 'if arr.dtype.kind not in "iuf":',
           'if arr.dtype.kind not in "f":', "integer arrays refused", _LOADERS),
    Mutant("loaders-first-of-many", "numeric/loaders.py", "if len(members) == 1:", "if len(members) >= 1:",
           "a file of several arrays read without a key", _LOADERS),
    Mutant("loaders-bias-column-refused", "numeric/loaders.py", "if b.ndim == 2 and 1 not in b.shape:",
           "if b.ndim == 2 and b.shape[0] != 1:", "a bias stored as a column (n x 1) refused", _LOADERS),
    # -- numeric/gram.py: the route's choice -------------------------------------------------------------
    Mutant("gram-auto-either", "numeric/gram.py", "return a.n >= MIN_TOKENS and a.n >= 8 * (a.d + b.d)",
           "return a.n >= MIN_TOKENS or a.n >= 8 * (a.d + b.d)", "the automatic route on either condition",
           _ROUTE),
    Mutant("gram-auto-strict", "numeric/gram.py", "return a.n >= MIN_TOKENS and a.n >= 8 * (a.d + b.d)",
           "return a.n > MIN_TOKENS and a.n >= 8 * (a.d + b.d)", "n = MIN_TOKENS not enough", _ROUTE),
    Mutant("gram-auto-twin-dimension-dropped", "numeric/gram.py",
           "return a.n >= MIN_TOKENS and a.n >= 8 * (a.d + b.d)", "return a.n >= MIN_TOKENS and a.n >= 8 * a.d",
           "the twin's dimension left out of the automatic route's ratio", _ROUTE),
    Mutant("gram-rank-rtol-and-tolerances", "numeric/gram.py",
           "if tol.rank_rtol is not None or b.backend.tolerance != tol:",
           "if tol.rank_rtol is not None and b.backend.tolerance != tol:",
           "the route steps aside only when rank_rtol is set and the tolerances differ", _ROUTE),
    Mutant("gram-undecided-kept", "numeric/gram.py", "if dist.holds or (auto and dist.undecided):",
           "if dist.holds:", "the automatic route keeps an undecided L = L~", _ROUTE),
    Mutant("gram-forced-route-re-decided", "numeric/gram.py",
           'auto = (ROUTE if route is None else route) == "auto"',
           'auto = (ROUTE if route is None else route) != "qr"',
           "the forced Gram route hands undecided verdicts to the QR route", _ROUTE),
    Mutant("gram-certificate-re-decided-when-forced", "numeric/gram.py",
           "if auto and (cert.decided and Decision.all([cert.el1, cert.el2, cert.el3]).undecided) \\\n",
           "if (cert.decided and Decision.all([cert.el1, cert.el2, cert.el3]).undecided) \\\n",
           "an undecided certificate re-decided by the QR route on the forced route too", _ROUTE),
    Mutant("gram-qr-certificate-on-undecided-structures", "numeric/gram.py",
           "if a.structure.decided and b.structure.decided:",
           "if True:",
           "the QR route's certificate asked for on structures it leaves undecided (undecided throughout)",
           _ROUTE),
    # -- numeric/witness.py -----------------------------------------------------------------------------
    Mutant("witness-any-column", "numeric/witness.py", "holds = bool(np.all(bound <= rtol * scale",
           "holds = bool(np.any(bound <= rtol * scale", "a fit shown when one column fits", _WITNESS),
    Mutant("witness-target-error-ignored", "numeric/witness.py",
           "scale = np.max(np.maximum(np.abs(Ys) - Ye, 0.0), axis=0) * (1 - 4 * UNIT_ROUNDOFF)",
           "scale = np.max(np.abs(Ys), axis=0) * (1 - 4 * UNIT_ROUNDOFF)",
           "the targets judged at their computed size, not the least their error allows", _WITNESS),
    Mutant("witness-regressor-error-dropped", "numeric/witness.py",
           "B = (1 + 2 * UNIT_ROUNDOFF) * np.abs(R) + tiny[None, :] + 1.01 * spread + Ye",
           "B = (1 + 2 * UNIT_ROUNDOFF) * np.abs(R) + tiny[None, :] + Ye",
           "the regressors' error left out of the bound", _WITNESS),
    Mutant("witness-no-step", "numeric/witness.py", "for step in range(1, max(int(steps), 1) + 1):",
           "for step in range(1, max(int(steps), 1)):", "one refinement step fewer (none for steps = 1)", _WITNESS),
    Mutant("witness-scaled-units", "numeric/witness.py",
           "best = Witness(holds, np.ldexp(bound, cy), np.ldexp(scale, cy), step)",
           "best = Witness(holds, bound, scale, step)", "bound and scale reported in the scaled columns' units",
           _WITNESS),
    # -- the evidence filters ---------------------------------------------------------------------------
    Mutant("steering-evidence-either-readout", "theorems/steering/record.py",
           "evidence = be.decision(len(pairs) >= 2 and min(dims) > 0,",
           "evidence = be.decision(len(pairs) >= 2 and max(dims) > 0,",
           "steering's evidence needs only one of Γ~, Γ_T to be non-zero", _EVIDENCE),
    Mutant("steering-twin-forms-without-gamma-in-N", "theorems/steering/record.py",
           "    if not be.exact and in_N.holds and same.holds:\n", "    if not be.exact and same.holds:\n",
           "steering on Γ~ read off the model's readouts of Γ without Γ ⊆ N", ("tests/test_steering.py",)),
    Mutant("steering-evidence-one-pair", "theorems/steering/record.py",
           "evidence = be.decision(len(pairs) >= 2 and min(dims) > 0,",
           "evidence = be.decision(len(pairs) >= 1 and min(dims) > 0,", "a single pair counted as evidence",
           _EVIDENCE),
    Mutant("thm14-readouts-seen-either", "theorems/thm14/record.py",
           "seen = a.backend.decision(min(dims) > 0,", "seen = a.backend.decision(max(dims) > 0,",
           "Theorem 14's readouts seen with only one of Γ~, Γ_T non-zero", _EVIDENCE),
    Mutant("thm14-enough-pairs-either", "theorems/thm14/record.py",
           "enough = a.backend.decision(not any(r.trivial for r in trivial),",
           "enough = a.backend.decision(not all(r.trivial for r in trivial),",
           "enough pairs when one of the two models does not fit every readout", _EVIDENCE),
    Mutant("thm14-seen-meet-N-ignored", "theorems/thm14/record.py", "    if meet == 0:\n",
           "    if meet == -1:\n",
           "a transported readout seen as non-zero where Γ ∩ N = {0}", _EVIDENCE),
    Mutant("thm14-gamma-q-full-rank-as-differences", "numeric/relational.py",
           "        return r_Y if ok_Y else None\n", "        return r_Y - 1 if ok_Y else None\n",
           "dim Γ_q of regressors of full row rank taken as the rank of the readouts' differences",
           ("tests/test_witness_verdicts.py",)),
    Mutant("thm14-gamma-q-readouts-ignored", "theorems/thm14/__init__.py",
           "            ok = dim is None or dim == res.gamma_q.shape[1]\n", "            ok = True\n",
           "a fitted W whose rank the readouts contradict keeps Γ_q decided", ("tests/test_witness_verdicts.py",)),
    # -- the real-model self-test itself ------------------------------------------------------------------
    Mutant("realmodel-selftest-one-sided-close", "theorems/engine/realmodel_selftest.py",
           "if not (abs(got - want) <= atol + rtol * abs(want)):", "if not (got - want <= atol + rtol * abs(want)):",
           "the self-test's comparisons accept anything smaller than expected", _SELFTEST),
    Mutant("realmodel-selftest-passed-ignores-controls", "theorems/engine/realmodel_selftest.py",
           'out["passed"] = bool(controls.get("passed", True)) and real["passed"]',
           'out["passed"] = bool(controls.get("passed", True))',
           "check's verdict ignores the real-model controls", _SELFTEST),
    Mutant("realmodel-selftest-swallows-errors", "theorems/engine/realmodel_selftest.py",
           'found.append(f"raised {type(exc).__name__}: {exc}")', "pass",
           "a control that raises counts as passed", _SELFTEST),
    Mutant("realmodel-selftest-r2-one-mean", "theorems/engine/realmodel_selftest.py",
           "tot = ((Y - Y.mean(axis=0, keepdims=True)) ** 2).sum(axis=0)", "tot = ((Y - Y.mean()) ** 2).sum(axis=0)",
           "the self-test's own R^2 against one mean (it shares the bug it should catch)", _SELFTEST),
    Mutant("realmodel-selftest-wedin-one-role", "theorems/engine/realmodel_selftest.py",
           "for s_p, U_q, s_q, Vt_q, E in ((sa, Ub, sb, Vtb, Lb - La), (sb, Ua, sa, Vta, La - Lb)):",
           "for s_p, U_q, s_q, Vt_q, E in ((sa, Ub, sb, Vtb, Lb - La),):",
           "the self-test's own Wedin bound with one role", _SELFTEST),
    Mutant("graded-el-downgrade-on-ratio", "numeric/graded.py",
           'same["verdict"] != Truth.HOLDS.value and \\\n            set(verdicts.values())',
           'same["ratio"] > 1.0 and \\\n            set(verdicts.values())',
           "EL1-EL3 holding at the tolerance kept where L = L~ is undecided (not only where it fails)",
           ("tests/test_graded_el_invariance.py",)),
    Mutant("graded-ranks-differ-over-equal-logits", "numeric/graded.py",
           'decided = sa.k_decided and sb.k_decided and same["verdict"] != Truth.HOLDS.value',
           "decided = sa.k_decided and sb.k_decided",
           "ranks by rounding that differ fail EL3 also where L = L~ holds entry by entry",
           ("tests/test_graded_el_invariance.py::test_equal_logits_never_stand_beside_a_failing_condition",)),
    Mutant("graded-underflow-counts-as-equal", "numeric/distances.py",
           "np.where((ca > 0) | (cb > 0), 2.0 * UNDERFLOW, 0.0)", "np.zeros_like(ca)",
           "two logits that both underflowed to 0 are certainly equal (no underflow in the entries' bound)",
           ("tests/test_graded_el_invariance.py",)),
    Mutant("graded-exact-witness-ignored", "numeric/graded.py", "        if answer is False:",
           "        if answer is False and False:",
           "an open entry recomputed beyond gap rtol does not fail L = L~",
           ("tests/test_graded_el_invariance.py",)),
    Mutant("entries-rounding-buys-holds", "numeric/primitives.py", "        top = diff + err\n",
           "        top = np.maximum(diff - err, 0.0)\n",
           "an entry of L = L~ holds when its difference is within its rounding bound of the tolerance",
           ("tests/test_float_soundness.py",)),
    Mutant("dot2-bound-half-an-ulp", "numeric/linalg.py",
           "        err = (u * np.abs(res) + gamma * gamma * size * (1 + gamma)) / (1 - u)\n",
           "        err = u * np.abs(res)\n",
           "a compensated dot product is taken as correctly rounded (its gamma_n^2 term left out)",
           ("tests/test_float_soundness.py",)),
    Mutant("tiles-underflow-free", "numeric/logit_tiles.py",
           "    live = fl.underflow_loss(a.d, b.d) * (", "    live = 0.0 * (",
           "the tiled L = L~ leaves what underflow may lose out of each entry's bound",
           ("tests/test_float_soundness.py",)),
    Mutant("recompute-lossy-rows-free", "numeric/primitives.py",
           "lost = 2.0 ** -1074 * (_lost_terms(F, LF, G, LG) + _lost_terms(F, LF, P, LP))",
           "lost = 0.0 * (_lost_terms(F, LF, G, LG) + _lost_terms(F, LF, P, LP))",
           "a recomputed entry whose row lost entries to underflow on its scaling is judged as if it had not",
           ("tests/test_float_soundness.py",)),
    Mutant("lem8-ratio-error-is-room", "theorems/lem8/__init__.py",
           "    return be.tolerance.certain(abs(r1.lam - r2.lam), max(abs(r1.lam), abs(r2.lam)), err)",
           "    return be.tolerance.certain(max(abs(r1.lam - r2.lam) - err, 0.0), max(abs(r1.lam), abs(r2.lam)))",
           "two float ratios are the same when they lie within their errors of each other (the error as room)",
           ("tests/test_lem8.py",)),
    Mutant("el-tie-without-distribution", "theorems/thm5/__init__.py",
           "    if not dist.holds:\n        return cert\n", "",
           "the EL conditions are tied to L = L~ without L = L~ holding",
           ("tests/test_cor6_witness.py", "tests/test_thm5.py")),
    Mutant("transport-undecided-premise-raises", "theorems/thm14/__init__.py",
           "    if d.fails:\n        raise TransportError(message)\n",
           "    if not d.holds:\n        raise TransportError(message)\n",
           "a transport whose premise is only undecided raises as if it failed",
           ("tests/test_steering.py",)),
    Mutant("equilibrated-bound-lost-below-subnormals", "numeric/linalg.py",
           "            bound = np.where(scale_rows(bound, -e) < E, np.nextafter(bound, np.inf), bound)\n", "",
           "an error bound scaled down among the subnormals is rounded to zero before the columns scale it up",
           ("tests/test_float_soundness.py",)),
    Mutant("zero-term-sets-the-scale", "numeric/linalg.py",
           "            out = np.where(top > 0, np.maximum(out, np.frexp(top)[1]), out)\n",
           "            out = np.maximum(out, np.where(top > 0, np.frexp(top)[1], 0))\n",
           "a row that is zero in one term of a correctly rounded product counts as exponent 0 and sets the row's "
           "scale", ("tests/test_float_soundness.py",)),
    Mutant("zero-screen-without-bound", "numeric/equivalence.py",
           "                sure[rows] = np.any(np.isfinite(B) & (np.abs(P) > c * B + tiny), axis=1)\n",
           "                sure[rows] = np.any(np.isfinite(B) & (P != 0), axis=1)\n",
           "the screen before the exact zero check takes any computed logit that is not zero as nonzero, "
           "rounding included", ("tests/test_float_soundness.py",)),
    Mutant("centred-factor-without-means", "numeric/factor.py",
           "Rz[:, D].copy(),", "0.0 * Rz[:, D],",
           "the factor made on the centred matrix leaves out the means it subtracted",
           ("tests/test_graded_speed_routes.py",)),
    Mutant("centred-failure-is-householder", "numeric/factor.py",
           "            return None, None, (None if plain else \"householder\")\n",
           "            return None, None, \"householder\"\n",
           "a matrix whose centred form is rank deficient (a folded bias) goes to Householder QR even where it is "
           "well conditioned itself", ("tests/test_graded_speed_routes.py",)),
    Mutant("sliced-slices-too-wide", "numeric/sliced.py",
           "    return (53 - (max(int(d), 1) - 1).bit_length()) // 2\n",
           "    return (53 - (max(int(d), 1) - 1).bit_length()) // 2 + 3\n",
           "the slice of the sliced products is three bits too wide: its product is no longer exact",
           ("tests/test_sliced.py",)),
    Mutant("sliced-rest-unbounded", "numeric/sliced.py",
           "    left = np.column_stack([(gamma + _U) * na[0], gamma * na[1], na[1],\n",
           "    left = np.column_stack([0 * na[0], 0 * na[1], na[1],\n",
           "the rounding of the rest of a sliced product is left out of its bound",
           ("tests/test_sliced.py",)),
    Mutant("sliced-norms-underflow", "numeric/linalg.py",
           "    small = np.flatnonzero((sq < 2.0 ** -900) | (sq > 2.0 ** 900))\n",
           "    small = np.flatnonzero(sq > 2.0 ** 900)\n",
           "the norms of rows whose squares underflow (a sliced product's smallest slices) are their "
           "underflowed squares' roots", ("tests/test_sliced.py", "tests/test_norm_underflow.py")),
    Mutant("tiles-dense-without-declared", "numeric/logit_tiles.py",
           "                    err += 2.02 * ie * (np.abs(F[x]) @ H.T)\n",
           "                    err += 0.0 * ie * (np.abs(F[x]) @ H.T)\n",
           "tiles formed by sliced products whole leave the models' declared input errors out of each entry's bound",
           ("tests/test_logit_tiles.py",)),
    Mutant("scale-rows-double-rounding", "numeric/linalg.py",
           "        return X * np.ldexp(1.0, -e)[:, None]\n",
           "        return (X * np.ldexp(1.0, 1 - e)[:, None]) * 0.5\n",
           "rows scaled by powers of two in two steps, rounding twice where they land among the subnormals",
           ("tests/test_logit_tiles.py",)),
    Mutant("carried-verdict-keeps-the-twins-misfit", "theorems/thm14/__init__.py",
           "    if computed.holds:\n        return computed\n",
           "    if not computed.undecided:\n        return computed\n",
           "a carried verdict fails on the twin's computed misfit, which measures the errors of Γ~, W~, ṽ or w~",
           ("tests/test_steering.py", "tests/test_thm14.py")),
    Mutant("carried-translation-decided-on-the-twin", "theorems/steering/__init__.py",
           "        fit = thm14._implied(fit, result.decision)\n",
           "        pass\n",
           "the carried translation decided on the twin's computed Γ~ and ṽ, not on the model's readouts",
           ("tests/test_steering.py",)),
    Mutant("subspace-decided-on-the-computed-map", "theorems/thm14/__init__.py",
           "        dec = _implied(dec, result.decision)\n",
           "        pass\n",
           "the readout subspace a fit implies fails on the errors its computed b and W carry",
           ("tests/test_thm14.py",)),
    Mutant("implied-probe-applicable-without-the-projection-error", "theorems/thm14/__init__.py",
           "            extra = fr.projection_error(model, delta, gamma_error=gamma_error)\n",
           "            extra = 0.0\n",
           "whether P_N(g(a) - g(b)) lies in Γ is judged without the error of the computed P_N",
           ("tests/test_thm14.py",)),
    Mutant("rounded-dots-bound-underflow-only", "numeric/linalg.py",
           "        if rows.size * width <= EXACT_UNDERFLOW_TERMS:\n",
           "        if False:\n",
           "products near underflow are bounded as lost, never summed exactly",
           ("tests/test_thm14.py", "tests/test_float_primitives.py")),
    Mutant("rounded-dots-exact-sum-unrounded", "numeric/linalg.py",
           "                tiny[i] = 0.0 if Fraction(float(out[i])) == exact else 2.0 ** -1074\n",
           "                tiny[i] = 0.0\n",
           "an exact sum rounded among the subnormals is called exact",
           ("tests/test_float_primitives.py",)),
    Mutant("analyse-row-spaces-as-given", "numeric/spectra.py",
           "        cos, dims = _scaled_cosines(model, tol)\n",
           "        pass\n",
           "dim SF and dim SG are cut at the rounding of F and G_0 as given, below a decided k",
           ("tests/test_graded_soundness.py",)),
    Mutant("graded-fit-M-off-the-coordinates-always", "numeric/linear_properties.py",
           "    if not _rank_by_rounding(r.spectra) or r.fac.formed is None:\n        return None\n    Q, E, _ = r.fac.formed\n",
           "    if True:\n        return None\n    Q, E, _ = r.fac.formed\n",
           "a graded fit reading M at k = rank L is read off the truncation's coordinates, not the formed L",
           ("tests/test_graded_soundness.py",)),
    Mutant("affine-rank-with-the-constant-column-only", "numeric/primitives.py",
           "    if p < 2:\n        return direct\n",
           "    if True:\n        return direct\n",
           "the rank of an affine fit's regressors is decided with the constant column joined to them only",
           ("tests/test_thm14.py",)),
    Mutant("implied-probe-applicable-on-the-projector", "theorems/thm14/__init__.py",
           "    if not be.exact and result.given is not None and gamma_in_N(model, result.given).holds:\n",
           "    if False:\n",
           "whether P_N(g(a) - g(b)) lies in Γ ⊆ N is judged on the computed projectors, not on the log-odds",
           ("tests/test_thm14.py",)),
    Mutant("difference-in-readouts-sum", "numeric/relational.py",
           "    return consistent(AX, BX, np.hstack([F, F]), _pair_rows(G, [(a, b)]), model.backend.tolerance, model.input_error)\n",
           "    return consistent(AX, BX, np.hstack([F, F]), np.concatenate([G[a], G[b]])[None, :], model.backend.tolerance, model.input_error)\n",
           "whether P_N(g(a) - g(b)) lies in Γ is decided on the log-odds of g(a) + g(b)",
           ("tests/test_thm14.py",)),
    Mutant("carried-probe-w-off-M-by-its-error", "theorems/thm14/__init__.py",
           "    if not be.exact and not in_M.holds and probe.reading == \"M\":\n",
           "    if False:\n",
           "a probe fitted reading M is refused by the transport where its computed w is off M by the fit's errors",
           ("tests/test_thm14.py",)),
    Mutant("identity-without-the-whole-SF", "numeric/transport.py",
           "    if s.decided and s.basis_SF.shape[0] == twin.d:\n",
           "    if s.decided and s.basis_SF.shape[0] > twin.d:\n",
           "whether the transported map is the identity is judged on the computed Γ~ where the twin's SF~ is the whole space",
           ("tests/test_steering.py",)),
    Mutant("identity-by-SF-always", "numeric/transport.py",
           "    if s.decided and s.basis_SF.shape[0] == twin.d:\n",
           "    if s.decided:\n",
           "the transported map is called the identity whatever the twin's SF~",
           ("tests/test_steering.py",)),
    Mutant("implied-probe-fails-on-its-error", "theorems/thm14/__init__.py",
           "    if not be.exact and not Decision.all(checks).holds:\n",
           "    if not be.exact and Decision.all(checks).undecided:\n",
           "the implied probe fails on a misfit that the errors of the fitted W, b carry into w, c",
           ("tests/test_thm14.py",)),
    Mutant("carried-probe-fails-on-its-error", "theorems/thm14/__init__.py",
           "        fit = _implied(fit, linear_probing(twin, pairs, a, b, \"M\").decision)\n",
           "        pass\n",
           "the carried probe fails on a misfit that the errors of w and A* carry into w~",
           ("tests/test_thm14.py",)),
    Mutant("zero-logits-last-chunk", "numeric/equivalence.py",
           "            zero &= ~np.any((L[0] != 0) | (L[1] != 0), axis=1 if by_context else 0)\n",
           "            zero = ~np.any((L[0] != 0) | (L[1] != 0), axis=1 if by_context else 0)\n",
           "a context is called zero on the last chunk of its tokens alone",
           ("tests/test_float_soundness.py",)),
    Mutant("sliced-logits-without-tail", "numeric/logit_tiles.py",
           "sides.extend((Slices.of(G0a, T0a), Slices.of(G0b, T0b)))\n",
           "sides.extend((Slices.of(G0a, None), Slices.of(G0b, None)))\n",
           "the sliced logits of the tiles take g_0 as its rounded value, without the subtraction's error",
           ("tests/test_sliced.py",)),
    Mutant("sliced-tail-unsigned", "numeric/logit_tiles.py",
           "    G0a, T0a = fl.two_sum(a.G[j:j + nt], -ga)\n    G0b, T0b = fl.two_sum(b.G[j:j + nt], -gb)\n",
           "    G0a, T0a = fl.subtract_with_error(a.G[j:j + nt], ga)\n"
           "    G0b, T0b = fl.subtract_with_error(b.G[j:j + nt], gb)\n",
           "the tiles' sliced logits take the subtraction's error by its size, not its signed value",
           ("tests/test_sliced.py",)),
    Mutant("recomputed-entries-all-at-once", "numeric/primitives.py",
           "    for lo in range(0, max(count, 1), RECOMPUTED_CHUNK):\n"
           "        part = judge(np.arange(lo, min(count, lo + RECOMPUTED_CHUNK)), fl.compensated_dots)\n",
           "    for lo in range(0, max(count, 1), max(count, 1)):\n"
           "        part = judge(np.arange(lo, count), fl.compensated_dots)\n",
           "the entries left open are recomputed with every entry's rows gathered at once",
           ("tests/test_float_primitives.py",)),
    Mutant("graded-norms-square-underflow", "numeric/linalg.py",
           "    e = _exponent(X)\n    return float(np.ldexp(np.linalg.norm(np.ldexp(X, -e)), e))\n",
           "    return float(np.linalg.norm(X))\n",
           "the graded queries' residual norms are taken unscaled, so entries near 2^-550 square to zero",
           ("tests/test_graded_queries_scaling.py",)),
    Mutant("graded-parallel-unscaled", "numeric/linear_properties.py",
           "    u, v = np.ldexp(u, -eu), np.ldexp(v, -ev)\n", "    eu = ev = 0\n",
           "the graded parallelism fit takes norms of differences near 2^-560 unscaled",
           ("tests/test_graded_queries_scaling.py",)),
    Mutant("token-readout-one-scale", "numeric/relational.py",
           "    D, G = span_columns(D, G)\n", "",
           "a token readout's pairs are judged against the size of all the differences together",
           ("tests/test_float_soundness.py",)),
    Mutant("factor-underflow-free", "numeric/spectra.py",
           "        level += unit * (norm_fro(fac.R_F) + norm_fro(fac.R_G) + 2.0 ** -1073 + lost)\n",
           "", "the triangular factors of subnormal features are taken to carry relative errors only",
           ("tests/test_graded_queries_scaling.py", "tests/test_graded_soundness.py")),
    Mutant("graded-rank-zero-holds-always", "numeric/linear_properties.py",
           "        self.zero = bool(spectra.k_decided and self.k == 0)\n",
           "        self.zero = bool(self.k == 0)\n",
           "the graded queries take an undecided rank 0 for a zero truncation",
           ("tests/test_graded_queries_scaling.py", "tests/test_invariance_search.py")),
    Mutant("formed-product-error-dropped", "numeric/spectra.py",
           "    err = _frobenius(Es) + 2.0 * math.sqrt(m * n) * 2.0 ** -1074 + svd_noise(max(m, n), float(s0[0]))\n",
           "    err = 2.0 * math.sqrt(m * n) * 2.0 ** -1074 + svd_noise(max(m, n), float(s0[0]))\n",
           "the SVD of a formed L is bounded without the error of the formed product (its rounding, declared input errors)",
           ("tests/test_formed_factor.py",)),
    Mutant("graded-factored-route", "numeric/linear_properties.py",
           "    fac = fac or formed_factor(model)\n", "    fac = fac or factor(model)\n",
           "the graded queries of a small model take the factored route, whose bound grows with the basis' condition",
           ("tests/test_formed_factor.py",)),
    Mutant("zero-logits-underflow", "numeric/equivalence.py",
           "            zero &= ~np.any((L[0] != 0) | (L[1] != 0), axis=1 if by_context else 0)\n",
           "            zero &= ~np.any(L[0] != 0, axis=1 if by_context else 0)\n",
           "a logit that underflows to zero in its correctly rounded product is taken for an exact zero",
           ("tests/test_graded_zero_columns.py", "tests/test_graded_queries_scaling.py")),
    Mutant("graded-zero-column-rounded", "numeric/equivalence.py",
           "    return bool(_zero_logits([(np.asarray(model.F, dtype=float), G[[a]], g)], np.array([0]), False)[0])\n",
           "    return not np.any(np.asarray(model.F, dtype=float) @ (G[a] - G[b]))\n",
           "a log-odds column is taken for zero where its ordinary product rounds to zero",
           ("tests/test_graded_zero_columns.py",)),
    Mutant("graded-zero-second-column-fails", "numeric/linear_properties.py",
           "    if k_decided and second_zero and first_norm > 2.0 * bound:\n",
           "    if k_decided and second_zero:\n",
           "a first log-odds column is called no multiple of a zero second one however small it is in L_k",
           ("tests/test_graded_zero_columns.py",)),
    Mutant("formed-column-theta-dropped", "numeric/linear_properties.py",
           "        bound = ((theta + 2.0 * eta) * (nc + delta)",
           "        bound = ((2.0 * eta) * (nc + delta)",
           "a formed log-odds column of L_k is bounded without the truncation's angle",
           ("tests/test_graded_columns.py",)),
    Mutant("rows-basis-theta-dropped", "numeric/linear_properties.py",
           "        return self.fac.left(self.k)[idx], math.sqrt(2.0) * self.theta + 2.0 * eta\n",
           "        return self.fac.left(self.k)[idx], 2.0 * eta\n",
           "the regressors of a fit reading M are bounded without the truncation's angle",
           ("tests/test_graded_columns.py",)),
    Mutant("exact-fit-revives-rounding", "numeric/linear_properties.py",
           '    if dof > 0 and formed is None and ((reading == "any" and not getattr(model, "input_error", 0.0))\n'
           '                                       or live.size == X.shape[1]):\n',
           "    if dof > 0:\n",
           "a fit on computed regressors is solved exactly along a direction only their rounding made independent",
           ("tests/test_exact_residual.py", "tests/test_graded_boundaries.py")),
    Mutant("formed-shift-forgotten", "numeric/spectra.py",
           "        s = np.ldexp(s0, e - shift)\n", "        s = np.ldexp(s0, e)\n",
           "the singular values of a formed L whose factors were scaled up keep that scaling",
           ("tests/test_graded_columns.py", "tests/test_formed_factor.py")),
    Mutant("two-sum-half-the-error", "numeric/linalg.py", "    e += bb\n", "    pass\n",
           "TwoSum's error without the part of b that the sum lost",
           ("tests/test_linalg_float.py",)),
    Mutant("scaling-keeps-the-scale-where-bits-are-lost", "numeric/linalg.py",
           "            lost &= scale_rows(Xs, -e) != X      # (a subnormal result may still be exact)\n",
           "            return X, E\n",
           "a scaling that pushes entries among the subnormals is not applied (the rank decided on the matrix as given)",
           ("tests/test_float_soundness.py",)),
    Mutant("lost-bits-round-every-bound-up", "numeric/linalg.py",
           "                bound = np.where(both, np.nextafter(bound, np.inf), bound)\n",
           "                bound = np.nextafter(bound, np.inf)\n",
           "the bound of what a scaling lost rounded up on every entry, so exact zeros get 2^-1074",
           ("tests/test_float_soundness.py",)),
    Mutant("unbounded-entries-never-hold", "numeric/graded.py",
           "        elif answer is True:\n",
           "        elif answer is True and not unbounded:\n",
           "L = L~ is not held where some entry's dot-product bound overflowed, though those entries were recomputed",
           ("tests/test_graded_soundness.py",)),
    Mutant("dead-terms-set-the-scale", "numeric/primitives.py",
           "            F, G, P = _live_terms(F, G, P)\n",
           "            pass\n",
           "recomputed entries scaled by their rows' largest entries, also those in coordinates the other side does not read",
           ("tests/test_graded_soundness.py",)),
    Mutant("dead-coordinates-set-the-scale", "numeric/linalg.py",
           "    if keep.all():\n        return A, B, EA, EB\n",
           "    if True:\n        return A, B, EA, EB\n",
           "a coordinate one factor does not use kept in both, so its 2^980 sets the scale of rows whose products it never reads",
           ("tests/test_graded_soundness.py", "tests/test_float_soundness.py")),
    Mutant("forms-keep-dead-coordinates", "numeric/parallel.py",
           "        if not live.all():\n            X = np.where(live[None, :], X, 0.0)\n",
           "        if False:\n            X = np.where(live[None, :], X, 0.0)\n",
           "the forms of parallelism scale their rows by a coordinate no reader reads (2^984 beside ordinary entries)",
           ("tests/test_lem8ctx.py",)),
    Mutant("loose-lines-at-the-whole-scale", "numeric/primitives.py",
           "    if best[1] and best[0] < min(m, n) and _loose_line(*out):\n",
           "    if False:\n",
           "a product's row or column within its own error of zero judged at the scale the factors give it, and the rank decided",
           ("tests/test_float_soundness.py",)),
    Mutant("underflow-bound-for-every-row", "numeric/witness.py",
           "for A, B in scaled if A.shape[1]], per_row=True)",
           "for A, B in scaled if A.shape[1]], per_row=False)",
           "a correctly rounded product charges what underflow may lose in one row of a column to every row of it",
           ("tests/test_float_soundness.py",)),
    Mutant("reading-m-on-the-projector-first", "numeric/relational.py",
           "        if alt is not None and (dec.undecided or not decided or alt.truth is not dec.truth):\n",
           "        if alt is not None and (dec.undecided or not decided) and not alt.undecided:\n",
           "a fit reading M decided through the computed P_M wherever that route decides, the logits asked only where it does not",
           ("tests/test_float_soundness.py",)),
    Mutant("el3-held-on-the-computed-pair", "numeric/equivalence.py",
           "    el3 = tol.certain(res3, nat3, err3)\n",
           "    el3 = tol.certain(res3, nat3, post3)\n    if not el3.holds:\n        el3 = tol.certain(res3, nat3, err3)\n",
           "EL3 held when the computed A, B satisfy it to their own rounding, their distance to A*, B* left out",
           ("tests/test_float_soundness.py",)),
    Mutant("held-by-l-unsaid", "numeric/graded.py",
           "            if v != Truth.HOLDS.value:\n                measures[n][\"decided_by\"] = BY_DISTRIBUTION\n",
           "            if False:\n                measures[n][\"decided_by\"] = BY_DISTRIBUTION\n",
           "EL verdicts held by L = L~ are reported with the measures' own bounds, which do not show them",
           ("tests/test_graded_soundness.py",)),
    Mutant("split-losses-counted-after-underflow", "numeric/parallel.py",
           "                hits = (R > 0).astype(float) @ (lost.T > 0).astype(float)\n",
           "                hits = (R > 0).astype(float) @ (Lq > 0).astype(float)\n",
           "what the split of a ratio lost is counted only where it survives the change into the forms' units",
           ("tests/test_lem8ctx.py",)),
    Mutant("row-space-mapped-back-whole", "numeric/linalg.py",
           "        B = np.ldexp(V, ec[None, :] - top[:, None])\n",
           "        B = np.ldexp(V, ec[None, :])\n",
           "a row space computed in scaled coordinates is mapped back without a power of two per row (overflow at 2^1000 apart)",
           ("tests/test_float_soundness.py",)),
    Mutant("regression-beyond-binary64-raises", "theorems/thm14/__init__.py",
           "        except fl.Unresolved as exc:\n            # regressors beyond binary64",
           "        except ZeroDivisionError as exc:\n            # regressors beyond binary64",
           "a regression whose intercept leaves binary64 raises instead of leaving the fit to the products",
           ("tests/test_float_soundness.py",)),
    Mutant("el-conjunction-blind-to-l-differing", "theorems/thm5/__init__.py",
           "            cert = replace(cert, joint=joint)",
           "            pass",
           "the conjunction of EL1-EL3 left open where L != L~ is certain (Theorem 5 makes it fail)",
           ("tests/test_float_soundness.py",)),
    Mutant("el-all-held-despite-l-differing", "theorems/thm5/__init__.py",
           "    held = cert.decided and all(d.holds for d in els)",
           "    held = False",
           "EL1-EL3 all held where L != L~ is certain (Theorem 5: one of them at least is wrong)",
           ("tests/test_float_soundness.py",)),
    Mutant("el-failing-despite-l-equal", "theorems/thm5/__init__.py",
           "    if not cert.decided or held:",
           "    if not cert.decided or any(d.fails for d in els) or held:",
           "an EL condition failing where L = L~ is certain, ranks equal (Theorem 5: it holds at that tolerance)",
           ("tests/test_float_soundness.py",)),
    Mutant("steering-against-the-first-pair", "numeric/parallel.py",
           "    refs = np.argmin(np.where(np.isnan(own), np.inf, own), axis=1)\n",
           "    refs = np.zeros(own.shape[0], dtype=int)\n",
           "steering compares every pair with the first, at the size of the four readouts (a first pair 2^400 "
           "large makes every other equal to it)",
           ("tests/test_float_primitives.py::test_steering_does_not_depend_on_the_order_of_the_pairs",)),
    Mutant("affine-rank-without-neighbours", "numeric/primitives.py",
           "    for diff in (other, chained):\n",
           "    for diff in (other,):\n",
           "an affine rank from the constant column or one reference row only, where rows of units beside rows "
           "2^400 are lost to both",
           ("tests/test_float_primitives.py::test_a_fit_is_not_held_where_small_contexts_sit_beside_huge_ones",
            "tests/test_float_primitives.py::test_a_zero_target_is_never_off_the_regressors_span",
            "tests/test_float_primitives.py::test_a_fit_does_not_fail_on_its_balanced_presentation")),
    Mutant("lone-deviation-is-its-own-unit", "numeric/linalg.py",
           "        if typical > 0:\n            smallest = np.minimum(smallest, typical)\n", "",
           "a coordinate in which every token but one agrees takes that one's distance as its unit, so a pivot "
           "2^60 off it measures 1 from the median and is kept",
           ("tests/test_pivot_invariance.py::test_a_pivot_alone_off_a_coordinate_is_far",)),
    Mutant("graded-raw-parallel-on-the-angle", "numeric/linear_properties.py",
           '            "parallel_raw": raw}', '            "parallel_raw": tol.certain(res_r, 1.0, extra=eps).truth.value}',
           "graded raw parallelism decided on the Euclidean angle, which a diagonal change of basis moves",
           ("tests/test_graded_el_invariance.py::test_graded_raw_parallelism_is_kept_by_a_diagonal_change_of_basis",)),
    Mutant("lemma8-separation-on-rounding-alone", "theorems/engine/invariance.py",
           "                                                        _TOLERANCE_BAND * size)))\n",
           "                                                        0 * size)))\n",
           "the harness counts a Lemma 8 residual inside the float side's tolerance as separated",
           ("tests/test_invariance_harness.py::test_a_lemma8_residual_within_the_tolerance_is_not_separated",)),
    Mutant("context-reference-in-coordinates", "numeric/parallel.py",
           "    return _reference_in_logits(np.asarray(model.F)[list(rows)], np.asarray(model.G), model.pivot)\n",
           "    return fl.reference_token(np.asarray(model.G), model.pivot)\n",
           "the reference token of Lemma 8's context rows chosen in G's coordinates, where a coordinate no context "
           "reads can make a far pivot look near",
           ("tests/test_pivot_invariance.py::test_a_pivot_far_in_what_the_contexts_read_is_far",)),
    Mutant("lemma8-raw-separation-on-rounding-alone", "theorems/engine/invariance.py",
           "                margins.append(_ratio_max(raw, _TOLERANCE_BAND * size))\n", "",
           "the harness counts a raw parallelism residual inside the float side's tolerance as separated",
           ("tests/test_invariance_harness.py::test_a_lemma8_residual_within_the_tolerance_is_not_separated",)),
    Mutant("identification-in-units-apart", "numeric/equivalence.py",
           "    t = _units_shift(np.asarray(Fa), np.asarray(Fb), G0a, E0a) if relative else 0\n",
           "    t = 0\n",
           "Corollary 6's map sought in the models' own units, where a subnormal context against one of 2^160 rounds it to zero",
           ("tests/test_float_soundness.py",)),
    Mutant("transport-premise-on-the-computed-map", "theorems/thm14/__init__.py",
           '    if in_M.fails and not be.exact and result.reading != "M":',
           "    if False:",
           "Γ_q ⊆ M failed on the span of a computed W as if exact (its error, which the coordinates' scales set, left out)",
           ("tests/test_thm14.py",)),
    Mutant("l-held-against-the-reference-alone", "numeric/equivalence.py",
           "    if d.holds and c != x.pivot:",
           "    if False:",
           "L = L~ held within the tolerance against the reference token, where against the pivot it certainly fails",
           ("tests/test_float_soundness.py",)),
    Mutant("graded-fit-against-a-far-pivot", "numeric/linear_properties.py",
           "    return model.with_pivot(c) if c != model.pivot else None",
           "    return None",
           "graded fits and steering on token readouts taken against a pivot 2^156 from every other token",
           ("tests/test_graded_soundness.py",)),
    Mutant("parallel-rows-unscaled-norms", "numeric/parallel_gram.py",
           "    (U, eu), (V, ev) = _columns_scaled(U), _columns_scaled(V)\n",
           "    (U, eu), (V, ev) = (U, 0), (V, 0)\n",
           "the rows of parallel_table (and analyse/compare --parallel) take plain norms: differences of 2^-600 square to zero",
           ("tests/test_parallel_gram.py",)),
    Mutant("unit-rows-unscaled", "numeric/parallel_gram.py",
           "    X = _rows_scaled(X.reshape(-1, X.shape[-1]))[0].reshape(X.shape)\n",
           "    X = X.reshape(-1, X.shape[-1]).reshape(X.shape)\n",
           "the study's cosines of differences of 2^-600 are undefined (their norms square to zero)",
           ("tests/test_parallel_gram.py",)),
    Mutant("ratio-flushed-to-zero", "theorems/lem8/__init__.py",
           "    if value == 0.0 and Fraction(lam) != 0:\n",
           "    if False:\n",
           "a ratio below binary64's range becomes 0 on the float side, where 0 = 0 v holds",
           ("tests/test_lem8.py",)),
    Mutant("graded-fit-fails-at-a-cut", "numeric/linear_properties.py",
           "    return out is not None and out[1] <= tol.gap * tol.rtol\n",
           "    return False\n",
           "a graded fit reading M fails on the directions the solver's cut kept, though an exact fit exists",
           ("tests/test_graded_soundness.py",)),
    Mutant("npz-duplicate-members-read", "numeric/loaders.py",
           "        # a zip may hold one name twice, and only the last copy would be read\n        twice",
           "        return archive\n        twice",
           "an archive holding one member name twice is read, its last copy silently used",
           ("tests/test_cli_inputs_more.py",)),
    Mutant("json-empty-model-name", "theorems/engine/modelfile.py",
           "    if \"\" in specs:\n",
           "    if False:\n",
           "a JSON model file may name a model with the empty string",
           ("tests/test_cli_inputs_more.py",)),
    Mutant("pair-keeps-the-reference-row", "numeric/relational.py",
           "    return np.delete(np.hstack([G, np.broadcast_to(-G[y0], G.shape)]), y0, axis=0)\n",
           "    return np.hstack([G, np.broadcast_to(-G[y0], G.shape)])\n",
           "G_0 as a pair keeps the reference token's row, a line within its declared error of zero",
           ("tests/test_float_soundness.py",)),
    Mutant("bad-input-error-builtin", "numeric/model.py",
           "            raise InputFormatError(\"input_error must be a number in [0, 1)\")\n",
           "            raise ValueError(\"input_error must be a number in [0, 1)\")\n",
           "a bad declared input error raises a builtin ValueError, not one of the package's errors",
           ("tests/test_errors.py",)),
    Mutant("underflowed-size-not-rounded-up", "numeric/parallel.py",
           "        return np.where((p < 2.0 ** -1022) & (np.asarray(x) > 0) & (np.asarray(y) > 0), np.nextafter(p, np.inf), p)\n",
           "        return p\n",
           "a product that underflows (a loss bound, |lambda| s(v)) taken as computed, possibly zero",
           ("tests/test_float_soundness.py",)),
    Mutant("p-value-ties-by-the-last-bit", "numeric/study.py",
           "against = int(np.sum(null >= observed - 2.0 * slack))", "against = int(np.sum(null >= observed))",
           "a null draw that ties with the category counts against it only if its rounding went that way",
           ("tests/test_study.py",)),
    Mutant("tolerance-of-vacuous-holds", "numeric/linalg.py",
           "        if not math.sqrt(self.gap) * self.rtol < 1:\n", "        if False:\n",
           "a tolerance whose holds bound sqrt(gap) rtol is 1 or more is accepted (any sine passes)",
           ("tests/test_cli_robustness.py",)),
    Mutant("lost-entries-cost-beside-zero-partners", "numeric/primitives.py",
           "        hit |= (LB > 0) & (A != 0)\n", "        hit |= LB > 0\n",
           "a recomputed entry pays for every entry its rows lost, even one that multiplies a zero",
           ("tests/test_float_soundness.py",)),
    Mutant("balanced-logits-refuse-unread-losses", "numeric/balance.py",
           "        F, okF = _exact(np.asarray(m.F), (t - a)[None, :], ~nG if logits_only else None)\n",
           "        F, okF = _exact(np.asarray(m.F), (t - a)[None, :], None)\n",
           "the presentation balanced for logits refuses a loss in a coordinate no logit reads",
           ("tests/test_float_soundness.py",)),
    Mutant("fit-fails-at-a-cut-rank", "numeric/relational.py",
           "    if dec.fails and reading == \"any\" and rank < Xs.shape[1] and _drops_a_direction(Xs, rank, model):\n",
           "    if False:\n",
           "a fit solved at a rank its scaled regressors exceed may still fail on its misfit",
           ("tests/test_float_soundness.py",)),
    Mutant("rounded-products-pay-losses-beside-zeros", "numeric/witness.py",
           "            hits += lost_A @ (B != 0).astype(float) + (A != 0).astype(float) @ lost_B\n",
           "            hits += lost_A @ np.ones(B.shape) + np.ones(A.shape) @ lost_B\n",
           "a correctly rounded product pays for a lost entry of a factor even where it multiplies a zero",
           ("tests/test_float_soundness.py",)),
    Mutant("tiles-first-failure-merges-later-blocks", "numeric/logit_tiles.py",
           "        if first_failure and fail:\n            break\n", "",
           "the pass that ends at the first failure merges blocks after the failing one (their results depend "
           "on the threads' timing)",
           ("tests/test_logit_tiles.py",)),
    Mutant("tiles-first-failure-never-stops", "numeric/logit_tiles.py",
           "        if stop is not None and stop(any_fail):\n            break\n", "",
           "the pass asked to end at the first failing tile judges every entry",
           ("tests/test_logit_tiles.py",)),
    Mutant("js-from-the-larger-probability-only", "numeric/distances.py",
           "        np.minimum(Ea, Eb, out=W)\n", "        np.maximum(Ea, Eb, out=W)\n",
           "the JS divergence's correction y min(p, p~) taken with the larger probability",
           ("tests/test_study.py",)),
    Mutant("tiles-pivot-declared", "numeric/logit_tiles.py",
           "            dright[2:, a.pivot - j] = 0.0\n", "            pass\n",
           "the pivot's column, zero by construction, carries the models' declared input errors",
           ("tests/test_logit_tiles.py",)),
    Mutant("tile-bounds-on-norms-that-underflow", "numeric/logit_tiles.py",
           "    right = np.vstack([fl.row_norms(G0a), fl.row_norms(G0b), fl.row_norms(T0a), fl.row_norms(T0b), live])\n",
           "    right = np.vstack([np.linalg.norm(G0a, axis=1), np.linalg.norm(G0b, axis=1),\n"
           "                       np.linalg.norm(T0a, axis=1), np.linalg.norm(T0b, axis=1), live])\n",
           "the tiled L = L~ bounds a token's rounding by norms whose squares underflow",
           ("tests/test_norm_underflow.py",)),
    Mutant("identification-residual-underflows", "numeric/equivalence.py",
           "    res1, res2 = fl.col_norms(R1), fl.row_norms(R2)\n",
           "    res1, res2 = np.linalg.norm(R1, axis=0), np.linalg.norm(R2, axis=1)\n",
           "Corollary 6's consistency residuals are norms whose squares underflow to 0",
           ("tests/test_norm_underflow.py",)),
    Mutant("steering-log-odds-on-product", "theorems/steering/__init__.py",
           "    if not be.exact:\n        return _log_odds_steering_on_forms(model, pairs, readouts._checked(model, T))\n", "",
           "float log_odds_steering judged on the plain product F G_0^T at the computed log-odds' size, no rounding bound",
           ("tests/test_transport_soundness.py",)),
    Mutant("equivalence-solve-not-rescaled", "numeric/equivalence.py",
           "        if not np.all(np.isfinite(W)) and (C.shape[0] == k or P is not None):\n", "        if False:\n",
           "a certificate solve whose k-th singular value is lost to rounding is left non-finite (no power-of-two "
           "row scaling)", ("tests/test_transport_soundness.py",)),
    Mutant("thm14-gamma-t-non-finite-raises", "theorems/thm14/__init__.py", '    with np.errstate(over="ignore", invalid="ignore"):\n        K = (be.eye(model.d) - P) @ cert.B @ V\n    if not np.all(np.isfinite(K)):\n        return unknown\n    # what the float side needs of the theorem: whether EL1-EL3 hold (or L = L~,\n    # which gives them by Theorem 5), the kernel\'s known rank, Γ\'s own error\n    try:\n        Ut, ok, error, readout = ftr.transported_kernel(\n            model, twin, K, P, V, cert.B, cert.errors.get("B", 0.0),\n            None if isinstance(gamma, readouts.TokenPairs) else _as_matrix(model, gamma, "gamma"),\n            equivalent=lambda: cert.decision.holds or thm5.same_distribution(model, twin).holds,\n            known_rank=lambda: _known_kernel_rank(model, twin, gamma, cert, decided, V.shape[1]),\n            gamma_error=lambda: _gamma_with_error(model, gamma)[3])\n    except fl.Unresolved:\n        return unknown\n',
           '    K = (be.eye(model.d) - P) @ cert.B @ V\n    Ut, ok, error, readout = ftr.transported_kernel(\n        model, twin, K, P, V, cert.B, cert.errors.get("B", 0.0),\n        None if isinstance(gamma, readouts.TokenPairs) else _as_matrix(model, gamma, "gamma"),\n        equivalent=lambda: cert.decision.holds or thm5.same_distribution(model, twin).holds,\n        known_rank=lambda: _known_kernel_rank(model, twin, gamma, cert, decided, V.shape[1]),\n        gamma_error=lambda: _gamma_with_error(model, gamma)[3])\n',
           "a non-finite certificate reaches transported_kernel, which raises Unresolved", ("tests/test_transport_soundness.py",)),
    Mutant("thm14-transport-refuses-open-certificate", "theorems/thm14/__init__.py",
           '        if a.backend.exact:\n            raise NotEquivalentError(f"the certificate (A*, B*) does not satisfy '
           'EL1-EL3 ({cert.decision})")\n        cert = thm5.Certificate(cert.A, cert.B, cert.el1, cert.el2, cert.el3, '
           'False, cert.errors)\n',
           '        raise NotEquivalentError(f"the certificate (A*, B*) does not satisfy EL1-EL3 ({cert.decision})")\n',
           "float transport refuses a pair whose L = L~ holds because the float certificate is open", ("tests/test_transport_soundness.py",)),
    Mutant("thm14-verified-flags-stale", "theorems/thm14/__init__.py",
           "        verified.gamma_decided = verified.decided = False\n", "        pass\n",
           "the twin re-decided on a Γ~ of undecided dimension keeps gamma_decided/decided True", ("tests/test_transport_soundness.py",)),
    Mutant("graded-k-rounding-rank-off", "numeric/spectra.py", "        if tol.rank_rtol is None:\n",
           "        if False:\n", "the graded k by rounding is the normwise cut of L's own spectrum again", ("tests/test_graded_soundness.py",)),
    Mutant("rounding-rank-declared-error-dropped", "numeric/spectra.py",
           'declared = float(getattr(model, "input_error", 0.0) or 0.0)', "declared = 0.0",
           "the graded rank by rounding ignores a declared input error", ("tests/test_graded_soundness.py",)),
    Mutant("graded-scores-from-G-always", "numeric/distances.py",
           "    if not shift or math.isfinite(float(np.sum(out))):", "    if True:",
           "scores f^T g(y) that overflow before the pivot's column is subtracted are reported as an overflow", ("tests/test_graded_soundness.py",)),
    Mutant("formed-column-truncated-at-k-by-rounding", "numeric/linear_properties.py", " or _rank_by_rounding(r.spectra):",
           ":", "at k = rank L decided by rounding, columns are read off the truncation's factors", ("tests/test_graded_soundness.py",)),
    Mutant("scaled-rank-contexts-unscaled", "numeric/spectra.py",
           "            return scale_rows(B, row_exponents(B))", "            return np.array(B)",
           "the factored rounding rank does not scale the contexts by powers of two", ("tests/test_graded_soundness.py",)),
    Mutant("scaled-rank-declared-term-dropped", "numeric/spectra.py",
           "        if declared:\n            parts_abs, parts_one = [], []",
           "        if False:\n            parts_abs, parts_one = [], []",
           "the factored rounding rank's bound leaves out the declared input error", ("tests/test_graded_soundness.py",)),
    Mutant("graded-k-full-rank-shortcut-at-n", "numeric/spectra.py",
           "    if counted == min(model.m, model.n - 1, model.d):\n",
           "    if counted == min(model.m, model.n, model.d):\n",
           "the full-rank shortcut misses the pivot's zero column where n - 1 is the smallest", ("tests/test_graded_soundness.py",)),
    Mutant("graded-k-full-rank-shortcut-one-short", "numeric/spectra.py",
           "    if counted == min(model.m, model.n - 1, model.d):\n",
           "    if counted >= min(model.m, model.n - 1, model.d) - 1:\n",
           "the full-rank shortcut decides with the last singular value unproven", ("tests/test_graded_soundness.py",)),
    Mutant("lazy-householder-keeps-no-q", "numeric/spectra.py", "keep_q=True, method=method, fresh=lazy",
           "keep_q=not lazy, method=method, fresh=lazy", "graded queries on file features raise where the "
           "contexts took the Householder route", ("tests/test_graded_soundness.py",)),
    Mutant("graded-distribution-against-a-far-pivot", "numeric/graded.py",
           '    if same["verdict"] == Truth.HOLDS.value and _far_pivot(a):\n',
           '    if False:\n',
           "the graded L = L~ held at a tolerance relative to logits against a pivot 2^200 from the other tokens", ("tests/test_graded_soundness.py",)),
    Mutant("rounding-rank-against-a-far-pivot", "numeric/spectra.py",
           "    G0, E0 = difference_with_error(G, reference_token(G, model.pivot), declared)\n",
           "    G0, E0 = difference_with_error(G, model.pivot, declared)\n",
           "the graded rank by rounding decided on G_0 against a pivot 2^200 from the other tokens", ("tests/test_graded_soundness.py",)),
    Mutant("el3-against-an-underflowed-spectrum", "numeric/graded.py", "    if not top > 0:\n",
           "    if False:\n", "EL3 measured against singular values that underflowed to zero in the common scale",
           ("tests/test_graded_soundness.py",)),
    Mutant("structure-against-the-given-pivot", "numeric/model.py",
           "    G0, E0 = fl.difference_with_error(model.G, fl.reference_token(np.asarray(model.G), model.pivot),\n",
           "    G0, E0 = fl.difference_with_error(model.G, model.pivot,\n",
           "SG and k decided on G_0 against a pivot 2^60 from the other tokens", ("tests/test_pivot_invariance.py",)),
    Mutant("distribution-against-the-given-pivot", "numeric/equivalence.py",
           "    if c == a.pivot:\n        return a, b\n", "    if True:\n        return a, b\n",
           "L = L~ judged at a tolerance relative to logits against a pivot 2^60 from the other tokens", ("tests/test_pivot_invariance.py",)),
    Mutant("context-rows-against-the-given-pivot", "theorems/lem8/__init__.py",
           "    ref = None if side is TOKENS else fp.context_reference(model, [*ab, *ce])\n",
           "    ref = None if side is TOKENS else model.pivot\n",
           "rows of log-odds differences compared against a pivot 2^60 from the other tokens", ("tests/test_pivot_invariance.py",)),
    Mutant("regressors-against-the-given-pivot", "numeric/relational.py",
           "_g0_pair(G, _reference_in_logits(F[S], G, model.pivot))", "_g0_pair(G, model.pivot)",
           "the log-odds regressors reading M are taken against a pivot 2^60 from the other tokens",
           ("tests/test_readouts.py",)),
    Mutant("regressors-reference-in-coordinates", "numeric/relational.py",
           "_g0_pair(G, _reference_in_logits(F[S], G, model.pivot))", "_g0_pair(G, fl.reference_token(G, model.pivot))",
           "the reference of a fit reading M chosen in G's (balanced) coordinates, where a far pivot can look near",
           ("tests/test_pivot_invariance.py::test_a_pivot_far_in_the_logits_alone_is_far",)),
    Mutant("logits-fit-against-the-given-pivot", "numeric/relational.py",
           "    ref = _reference_in_logits(FS, model.G, model.pivot)\n", "    ref = model.pivot\n",
           "the fit reading M on the logits takes them against a pivot far from every token",
           ("tests/test_pivot_invariance.py",)),
    Mutant("reference-distance-in-one-scale", "numeric/linalg.py",
           "            ratio = np.where(dev > 0, dev / unit, 0.0)\n", "            ratio = dev\n",
           "a pivot's distance from the median measured in one scale for every coordinate (a spread coordinate hides "
           "one where the tokens cluster)", ("tests/test_pivot_invariance.py",)),
    Mutant("transport-undecided-probe-raises", "theorems/thm14/__init__.py",
           "    if probe.decision.fails:\n        raise TransportError(f\"the probe to transport does not hold",
           "    if not probe.holds:\n        raise TransportError(f\"the probe to transport does not hold",
           "an undecided probe refused by the transport, as one that fails", ("tests/test_pivot_invariance.py",)),
    Mutant("gamma-in-n-against-the-given-pivot", "numeric/relational.py",
           "    G0_pair = _g0_pair(G, fl.reference_token(G, model.pivot))\n", "    G0_pair = _g0_pair(G, model.pivot)\n",
           "Γ ⊆ N decided on differences against a pivot 2^60 from every other token",
           ("tests/test_pivot_invariance.py",)),
    Mutant("spread-pair-compared-as-given", "numeric/equivalence.py",
           "    if max(coordinate_spread(a, unread=True), coordinate_spread(b, unread=True)) > SPREAD:\n",
           "    if max(coordinate_spread(a, unread=True), coordinate_spread(b, unread=True)) > 10 * SPREAD:\n",
           "L = L~ of a pair whose coordinates span a thousand binades is compared as given, not balanced",
           ("tests/test_float_inputs.py",)),
    Mutant("log-odds-compared-at-their-logits", "numeric/parallel.py",
           "    out = forms.evaluate([[(1, a), (-1, b)], [(1, c), (-1, e)]])\n",
           "    out = forms.sized([[(1, a), (-1, b)], [(1, c), (-1, e)]])\n",
           "an equation of log-odds differences is judged at the size of the logits they are formed from, "
           "which the pivot moves", ("tests/test_lem8.py",)),
    Mutant("transport-misfit-fails", "theorems/thm14/__init__.py",
           "        decision = _implied(decision, result.decision)\n", "        pass\n",
           "a transported map's computed misfit under certain premises is called a failure of the claim",
           ("tests/test_float_soundness.py", "tests/test_thm14.py")),
    Mutant("study-null-independent-pairs", "numeric/study.py",
           "    return pool[picks][:, inverse.reshape(rows.shape)]\n",
           "    return pool[rng.integers(0, pool.size, size=(int(draws),) + rows.shape)]\n",
           "the study's null draws its pairs independently, whatever tokens the category's pairs share",
           ("tests/test_study.py",)),
    Mutant("study-undefined-null-draws-ignored", "numeric/study.py",
           "    against = int(np.sum(null >= observed - 2.0 * slack)) + int(np.sum(~np.isfinite(null)))\n",
           "    against = int(np.sum(null >= observed - 2.0 * slack))\n",
           "null draws whose statistic is undefined count for the category", ("tests/test_study.py",)),
    Mutant("study-null-over-every-position", "numeric/study.py",
           "null_means[form] = _means_where(upper_values(C), np.isfinite(upper_values(cos[form])))",
           "null_means[form] = np.asarray(mean_offdiagonal(C), dtype=float).reshape(-1)",
           "the null's means over every pair of pairs where the category's is over its defined ones",
           ("tests/test_study.py",)),
    Mutant("study-agreement-null-unshaped", "numeric/study.py",
           "nulls = _agreement([by_model[n][cat][\"null_upper\"] for n in names], like=own)",
           "nulls = _agreement([by_model[n][cat][\"null_upper\"] for n in names])",
           "the agreement's draws correlated over every position where the category's is over its defined ones",
           ("tests/test_study.py",)),
    Mutant("study-agreement-ties-by-rounding", "numeric/study.py",
           "_p_value(float(observed), nulls, _correlation_rounding(own))",
           "_p_value(float(observed), nulls)",
           "the agreement's ties decided by rounding (a draw of one distribution a few ulps below 1)",
           ("tests/test_study.py",)),
    Mutant("graded-k-on-underflowed-spectrum", "numeric/spectra.py",
           "        su = fac.s_unit if fac.s_unit is not None else s\n", "        su = s\n",
           "the graded rank is decided on singular values that underflowed to zero",
           ("tests/test_graded_queries_scaling.py", "tests/test_graded_soundness.py")),
    Mutant("compare-rtol-to-hold-without-error", "theorems/engine/cli_models.py",
           'need = max(need, (float(m["value"]) + max(error, 0.0)) / res)',
           'need = max(need, float(m["value"]) / res)',
           "the rtol compare names for an undecided pair leaves the measures' errors out",
           ("tests/test_cli_compare_report.py",)),
]
MUTANTS += REAL_MODEL_MUTANTS

_STUDY_TESTS = ("tests/test_study.py", "tests/test_parallel_gram.py")
#: Mutants of the study, the vectorised parallelism, d_LLV and the extraction: code
#: that ``check`` does not run, so only the tests can kill them.
STUDY_MUTANTS: list[Mutant] = [
    Mutant("study-p-value-ties-favour", "numeric/study.py",
           "    against = int(np.sum(null >= observed - 2.0 * slack)) + int(np.sum(~np.isfinite(null)))\n",
           "    against = int(np.sum(null > observed + 2.0 * slack)) + int(np.sum(~np.isfinite(null)))\n",
           "a permutation p-value that counts ties for the category", _STUDY_TESTS),
    Mutant("study-p-value-no-plus-one", "numeric/study.py",
           "    return float((1 + against) / (1 + null.size))\n",
           "    return float(against / null.size)\n",
           "a p-value that can be 0 (the observed statistic left out of its own null)", _STUDY_TESTS),
    Mutant("study-js-one-side", "numeric/distances.py",
           'acc["js_sum"] += float(np.maximum(0.5 * twice / t, 0.0).sum())',
           'acc["js_sum"] += float(np.maximum(twice / t, 0.0).sum())',
           "Jensen-Shannon as the sum of the two KLs to the mixture, not their mean", _STUDY_TESTS),
    Mutant("parallel-gram-centred-over-tokens", "numeric/parallel_gram.py",
           "R[form] = _upper_r(F - F.mean(axis=0))", "R[form] = _upper_r(F - F.mean(axis=1, keepdims=True))",
           "the centred form removes each context's mean over coordinates instead of each coordinate's mean over "
           "contexts", _STUDY_TESTS),
    Mutant("llv-weight", "numeric/llv.py", "WEIGHT = 1e-5", "WEIGHT = 1e-4",
           "d_LLV with lambda = 1e-4 instead of the published 1e-5", ("tests/test_llv.py",)),
    Mutant("extract-first-position", "numeric/extract.py",
           "return torch.where(mask.bool(), positions, torch.full_like(positions, -1)).max(dim=1).values",
           "return torch.where(mask.bool(), positions, torch.full_like(positions, mask.shape[1])).min(dim=1).values",
           "the feature read at the first real position of each context instead of the last",
           ("tests/test_extract.py",)),
]
MUTANTS += STUDY_MUTANTS


@dataclass
class Outcome:
    name: str
    equivalent: str | None
    check_killed: bool | None = None
    check_by: str = ""
    tests_killed: bool | None = None
    tests_by: str = ""
    seconds: dict = field(default_factory=dict)


def _tree_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [f for f in out if f and (ROOT / f).is_file()]


def make_copy(mutant: Mutant | None) -> Path:
    """A temporary copy of the tree with ``mutant`` applied, and ``_site/`` laid out
    as the installed package (links into the copy)."""
    tmp = Path(tempfile.mkdtemp(prefix="allornone-mutant-"))
    for f in _tree_files():
        dst = tmp / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst)
    if mutant is not None:
        apply(mutant, tmp)
    pkg = tmp / "_site" / "allornone"
    pkg.mkdir(parents=True)
    for entry in (tmp / "core").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for sub, folder in PACKAGE_DIRS.items():
        if sub:
            (pkg / sub).symlink_to(tmp / folder)
    return tmp


def apply(mutant: Mutant, root: Path) -> None:
    path = root / mutant.path
    text = path.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise SystemExit(f"mutant {mutant.name}: the snippet occurs {count} times in {mutant.path} (must be once)")
    path.write_text(text.replace(mutant.old, mutant.new))


def _env(tmp: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp / "_site") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _failing_checks(report: dict) -> str:
    why = []
    for r in report.get("results", []):
        if r["verdict"] == "pass":
            continue
        parts = [f"{k.replace('_', ' ')} {r[k]}" for k in ("statement_failed", "steps_failed", "facts_failed",
                                                              "facts_contradicted", "contradictions",
                                                              "intent_failed") if r.get(k)]
        if not r.get("nonvacuous", True):
            parts.append("vacuous")
        why.append(f"{r['id']}: {', '.join(parts) or 'fail'}")
    gen = report.get("generic_crossvalidation")
    if gen and not gen.get("agree", True):
        why.append("generic identities disagree")
    ctl = report.get("self_test")
    if ctl and not ctl.get("passed", True):
        missed = [line for part in ("steps", "facts", "runner", "float", "real_models")
                  for line in ctl.get(part, {}).get("missed", [])]
        why.append(f"self-test: {missed[0]}" + (f" (+{len(missed) - 1} more)" if len(missed) > 1 else ""))
    for e in report.get("edges") or ():
        bad = [x["name"] for x in e["edges"] if not x["ok"]]
        if bad:
            why.append(f"{e['id']} edges: {', '.join(bad)}")
    return "; ".join(why)


def run_check(tmp: Path, trials: int, timeout: int) -> tuple[bool, str]:
    out = tmp / "_check.json"
    cmd = [sys.executable, "-m", "allornone.theorems.engine.cli", "check", "--trials", str(trials), "--edges",
           "--json", str(out)]
    try:
        p = subprocess.run(cmd, cwd=tmp, env=_env(tmp), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return True, f"timed out after {timeout} s"
    if p.returncode == 0:
        return False, ""
    if out.exists():
        return True, _failing_checks(json.loads(out.read_text())) or f"exit {p.returncode}"
    last = (p.stderr.strip().splitlines() or ["?"])[-1]
    return True, f"exit {p.returncode}: {last[:160]}"


def run_tests(tmp: Path, mutant: Mutant, timeout: int) -> tuple[bool, str]:
    files = list(dict.fromkeys(mutant.tests + (mutant.path,)))
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *files]
    try:
        p = subprocess.run(cmd, cwd=tmp, env=_env(tmp), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return True, f"timed out after {timeout} s"
    if p.returncode in (0, 5):
        return False, ""
    failed = [line.split(" - ")[0].replace("FAILED ", "").replace("ERROR ", "")
              for line in p.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return True, failed[0] if failed else f"pytest exit {p.returncode}"


def sanity(tmp: Path) -> None:
    """The copy, not the installed package, must be what is imported."""
    p = subprocess.run([sys.executable, "-c", "import allornone.theorems.thm5 as t; print(t.__file__)"],
                       cwd=tmp, env=_env(tmp), capture_output=True, text=True, check=True)
    if not p.stdout.strip().startswith(str(tmp)):
        raise SystemExit(f"the copy is not what gets imported: {p.stdout.strip()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", help="comma-separated mutant names")
    ap.add_argument("--list", action="store_true", help="list the mutants (and the test files of each) and exit")
    ap.add_argument("--trials", type=int, default=24, help="instances per result for check (default 24)")
    ap.add_argument("--no-tests", action="store_true", help="run check only")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per command (default 900)")
    ap.add_argument("--json", help="write the outcomes here")
    args = ap.parse_args(argv)

    mutants = MUTANTS
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {m.name for m in MUTANTS}
        if unknown:
            ap.error(f"unknown mutants: {', '.join(sorted(unknown))}")
        mutants = [m for m in MUTANTS if m.name in names]
    if args.list:
        for m in mutants:
            note = f"  [equivalent: {m.equivalent}]" if m.equivalent else ""
            print(f"{m.name:34} {m.path:26} {m.description}{note}\n{'':34} tests: {', '.join(m.tests) or '-'}")
        return 0
    for m in mutants:  # every snippet must still apply before anything runs
        apply(m, _Probe())

    started = time.perf_counter()
    if not args.no_baseline:
        tmp = make_copy(None)
        try:
            sanity(tmp)
            killed, why = run_check(tmp, args.trials, args.timeout)
            if killed:
                raise SystemExit(f"baseline: check fails on the unmutated tree ({why})")
            if not args.no_tests:
                union = Mutant("baseline", "tools/mutants.py", "", "", "",
                               tuple(dict.fromkeys(t for m in mutants for t in m.tests)))
                killed, why = run_tests(tmp, union, args.timeout)
                if killed:
                    raise SystemExit(f"baseline: the tests fail on the unmutated tree ({why})")
            print(f"baseline: check and tests pass on the unmutated tree ({time.perf_counter() - started:.0f} s)",
                  flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    outcomes = []
    for m in mutants:
        o = Outcome(m.name, m.equivalent)
        tmp = make_copy(m)
        try:
            t0 = time.perf_counter()
            o.check_killed, o.check_by = run_check(tmp, args.trials, args.timeout)
            o.seconds["check"] = round(time.perf_counter() - t0, 1)
            if not args.no_tests:
                t0 = time.perf_counter()
                o.tests_killed, o.tests_by = run_tests(tmp, m, args.timeout)
                o.seconds["tests"] = round(time.perf_counter() - t0, 1)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        outcomes.append(o)
        line = f"{m.name:34} check: {'KILLED' if o.check_killed else 'survived':8}"
        if not args.no_tests:
            line += f" tests: {'KILLED' if o.tests_killed else 'survived':8}"
        line += f" ({sum(o.seconds.values()):.0f} s)"
        if m.equivalent:
            line += f"  [equivalent: {m.equivalent}]"
        print(line, flush=True)
        if o.check_by:
            print(f"    check: {o.check_by}", flush=True)
        if o.tests_by:
            print(f"    tests: {o.tests_by}", flush=True)

    live = [o for o in outcomes if not o.equivalent]
    total = len(live)
    by_check = sum(bool(o.check_killed) for o in live)
    print(f"\n{len(outcomes)} mutants, {len(outcomes) - total} equivalent, {total} non-equivalent")
    if total:
        print(f"check (--trials {args.trials} --edges) killed {by_check}/{total} ({100 * by_check / total:.0f} %)")
        if not args.no_tests:
            by_tests = sum(bool(o.tests_killed) for o in live)
            print(f"tests killed {by_tests}/{total} ({100 * by_tests / total:.0f} %)")
            either = sum(bool(o.check_killed or o.tests_killed) for o in live)
            print(f"check or tests killed {either}/{total}")
        survivors = [o.name for o in live if not o.check_killed]
        if survivors:
            print("survived check: " + ", ".join(survivors))
    print(f"elapsed: {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"trials": args.trials, "outcomes": [o.__dict__ for o in outcomes]},
                                              indent=2) + "\n")
    all_killed = all(o.check_killed or o.tests_killed for o in live)
    return 0 if all_killed else 1


class _Probe:
    """Stands in for a copy's root to test that a mutant applies to the real tree
    (reads the real file, writes nothing)."""

    def __truediv__(self, rel):
        return _ProbeFile(ROOT / rel)


class _ProbeFile:
    def __init__(self, path):
        self.path = path

    def read_text(self):
        return self.path.read_text()

    def write_text(self, text):
        pass


if __name__ == "__main__":
    sys.exit(main())
