"""The ``allornone`` commands on trained models: ``extract`` (a head and its inputs
from a local checkpoint) and ``study`` (what several models share), and the words,
cosines and plot of ``compare``.

The commands register themselves on :data:`allornone.theorems.engine.cli.main`
when this module is imported (``cli.py`` does it at its end).
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path

import click
import numpy as np
from rich import box
from rich.markup import escape
from rich.table import Table

from allornone.errors import AllOrNoneError, InputFormatError, file_problem
from allornone.files import replacing
from allornone.model import shown
from allornone.theorems.engine.cli import _json_path, _phases, console, err_console, main, write_json

#: ``extract`` warns when the head does not reproduce the model's logits to this (relative).
DEVIATION_WARNING = 1e-4


# -- extract ---------------------------------------------------------------------------

def _layer(ctx, param, value):
    if value is None or value == "final":
        return "final"
    try:
        return int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected 'final' or an integer index into the hidden states",
                                 ctx, param) from None


def _out_extraction(ctx, param, value):
    if value is None:
        return None
    if Path(value).suffix.lower() not in (".npz", ".safetensors"):
        raise click.BadParameter(f"{value!r}: the file name must end in .npz or .safetensors", ctx, param)
    return _json_path(ctx, param, value)


class _Counter:
    """``progress(done, total)`` of an extraction on stderr: a rich bar on a
    terminal; otherwise a plain line when the model is loaded, at every tenth of
    the contexts, and at the end."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.start = time.perf_counter()
        self.bar = None
        if err_console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=err_console, transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task(escape(f"{self.name}: loading"), total=None)
        self.shown = -1
        return self.progress

    def progress(self, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=escape(f"{self.name}: contexts"), completed=done, total=total)
            return
        tenth = 10 * done // max(total, 1)
        if done in (0, total) or tenth > self.shown:
            self.shown = tenth
            what = "model loaded" if done == 0 else f"{done} of {total} contexts"
            err_console.print(f"{self.name} [{time.perf_counter() - self.start:.1f} s]: {what}", markup=False,
                              soft_wrap=True, highlight=False)

    def __exit__(self, *exc):
        if self.bar is not None:
            return self.bar.__exit__(*exc)
        return False


EXTRACT_EPILOG = """\b
Writes OUT with the arrays features (m x d), weight (n x d), bias (n; empty for
a head without one), tokens and contexts; then, for instance:
  allornone analyse --features OUT:features --head OUT:weight --bias bias \\
      --tokens OUT:tokens

\b
The model is loaded from DIR alone (local files only, no remote code); nothing
is downloaded. Needs PyTorch and transformers: pip install -e ".[hf]".
"""


@main.command(epilog=EXTRACT_EPILOG)
@click.option("--model", "model_dir", required=True, type=click.Path(), metavar="DIR",
              help="a checkpoint directory written by save_pretrained")
@click.option("--texts", required=True, type=click.Path(), metavar="FILE",
              help="the contexts: a UTF-8 file, one per line (blank lines skipped)")
@click.option("--layer", default="final", show_default=True, callback=_layer, metavar="final|INT",
              help="final: the head's input; an integer: that entry of the hidden states (no logit check)")
@click.option("--batch-size", "batch_size", default=16, show_default=True, type=click.IntRange(min=1),
              help="contexts per forward pass")
@click.option("--device", default="cpu", show_default=True, help="a PyTorch device (cpu, cuda, cuda:1, mps)")
@click.option("--padding-side", "padding_side", type=click.Choice(["left", "right"]), default=None,
              help="pad batches on this side (default: the tokenizer's); the rows are the same either way")
@click.option("--max-length", "max_length", type=click.IntRange(min=1), default=None,
              help="cut each context on the left to this many tokens (default: the model's window)")
@click.option("--dtype", default="float32", show_default=True, type=click.Choice(["float32", "float64", "auto"]),
              help="the weights' precision while running (auto: the checkpoint's)")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), callback=_out_extraction,
              metavar="OUT.npz|OUT.safetensors", help="the file to write")
def extract(model_dir, texts, layer, batch_size, device, padding_side, max_length, dtype, out_path):
    """The output layer of a local Hugging Face causal language model and its
    inputs on the contexts of FILE, checked against the model's own logits."""
    from allornone.numeric.extract import extract_checkpoint, save_extraction

    out = Path(out_path).resolve()
    if not Path(model_dir).is_dir():
        raise click.BadParameter(f"{model_dir!r} is not a directory", param_hint="'--model'")
    if Path(texts).is_dir():
        raise click.BadParameter(f"{texts!r} is a folder, not a file", param_hint="'--texts'")
    if not Path(texts).is_file():
        raise click.BadParameter(f"{texts!r}: {file_problem(texts)}", param_hint="'--texts'")
    if out == Path(texts).resolve() or Path(model_dir).resolve() in out.parents:
        raise click.BadParameter("would overwrite an input (the texts, or a file in the checkpoint)",
                                 param_hint="'--out'")
    try:
        with _Counter(f"extract {Path(model_dir).name}") as progress:
            ex = extract_checkpoint(model_dir, texts, layer, batch_size, device, progress,
                                    padding_side=padding_side, dtype=dtype, max_length=max_length)
    except AllOrNoneError:
        raise  # already one line that names the input
    except (RuntimeError, ValueError, OSError) as exc:
        # what the installed torch or transformers raise on input that passed the checks above
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputFormatError(f"{model_dir}: the model could not be run ({first})") from None
    save_extraction(ex, out_path)
    console.print(ex.summary(), markup=False, soft_wrap=True)
    if ex.truncated:
        err_console.print(f"warning: {ex.truncated} of {ex.m} contexts were cut on the left to the model's window",
                          markup=False, soft_wrap=True)
    rel = ex.rel_deviation
    if rel is not None and rel > DEVIATION_WARNING:
        err_console.print(f"warning: the head reproduces the model's logits only to {rel:.3g} of their scale "
                          f"(more than {DEVIATION_WARNING:g}): the model changes its logits after the head (a soft "
                          "cap, a scale), so the extracted L is not the model's", markup=False, soft_wrap=True)
    bias = f"bias {ex.n}" if ex.bias is not None else "bias empty (no bias)"
    console.print(f"wrote {out_path}: features {ex.m} x {ex.d}, weight {ex.n} x {ex.d}, {bias}, tokens, contexts",
                  markup=False, soft_wrap=True)


# -- study -----------------------------------------------------------------------------

def _plot_dir(ctx, param, value):
    """--plot DIR: an existing writable folder, or one that can be made in an existing folder."""
    if value is None:
        return None
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise click.BadParameter(f"{value!r} is a file, not a folder", ctx, param)
    target = path if path.is_dir() else path.parent
    if not target.is_dir():
        raise click.BadParameter(f"folder {str(target)!r} does not exist", ctx, param)
    if not os.access(target, os.W_OK):
        raise click.BadParameter(f"{str(target)!r} cannot be written", ctx, param)
    return value


def _num(x, fmt: str = ".3g") -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    return format(x, fmt)


def _pair(x, fmt: str = ".3g") -> str:
    if isinstance(x, (list, tuple)):
        return "/".join(_num(v, fmt) for v in x)
    return _num(x, fmt)


#: Marks a k in the study's table that is undecided (a singular value in the band).
UNDECIDED_K = "?"


def k_undecided(label: str | None) -> bool:
    """Whether a ``k_label`` (:meth:`allornone.numeric.spectra.Spectra.k_label`) says k is undecided.

    >>> k_undecided("k = 293 at rounding, gap 1000 (undecided: a singular value lies in the band)")
    True
    >>> k_undecided("k = 48 at rounding, gap 1000 (decided)")
    False
    """
    return bool(label) and "(undecided" in label


def distances_table(distances: list, details: list | None = None) -> Table:
    """The distances between each pair of models, one row per pair (columns: see ``study --help``);
    a k that ``details`` (the study's, in the same order) labels undecided is marked
    :data:`UNDECIDED_K`, and the mark is explained below the table."""
    t = Table(title="distances between the models", box=box.SIMPLE_HEAD, pad_edge=False)
    for c in ("a", "b"):
        t.add_column(c, no_wrap=True)
    # numbers fold onto a further line rather than being cut where the width runs out
    for c in ("KL a|b/b|a", "JS", "TV", "max |L-L~|", "centred", "d_LLV", "k", "cc min, median"):
        t.add_column(c, justify="right", overflow="fold")
    labels = [i.get("k_label") for i in details] if details else [None] * len(distances)
    marked = False
    for d, label in zip(distances, labels):
        cc = np.asarray([c for c in (d.get("canonical_correlations") or []) if c is not None], dtype=float)
        ccs = f"{cc.min():.3g}, {np.median(cc):.3g}" if cc.size else "-"
        k = str(d["k"])
        if k_undecided(label):
            k += UNDECIDED_K
            marked = True
        t.add_row(escape(shown(d["a"])), escape(shown(d["b"])), _pair(d["kl_mean"]), _num(d["js_mean"]), _num(d["tv_mean"]),
                  _num(d["max_abs_log_odds_diff"]), _num(d["centred_log_odds_distance"]),
                  _num(d["llv_distance"]), k, ccs)
    if marked:
        t.caption = (f"{UNDECIDED_K} after k: k is undecided on a's L (a singular value lies in the band between "
                     "the zero bound and gap times it)")
        t.caption_justify = "left"
    return t


def print_table(table: Table) -> None:
    """``table`` on stdout; off a terminal (a log, a file) as wide as its rows need,
    so that no number is cut or folded at the fixed width of such output."""
    if console.is_terminal:
        console.print(table)
        return
    from rich.measure import Measurement

    need = Measurement.get(console, console.options.update_width(10_000), table).maximum
    width = console.width
    console.width = max(width, need)
    try:
        console.print(table)
    finally:
        console.width = width


def parallelism_table(parallelism: list) -> Table:
    """Each category's mean cosines and p-values, per model (columns: see ``study --help``)."""
    t = Table(title="parallelism of the categories (mean cosine over the pairs of pairs)", box=box.SIMPLE_HEAD,
              pad_edge=False)
    for c in ("category", "model"):
        t.add_column(c, no_wrap=True)
    for c in ("cos_logodds", "p", "cos_centred", "p centred", "cos_raw", "agreement", "p agreement"):
        t.add_column(c, justify="right", overflow="fold")
    for p in parallelism:
        first = True
        for name, v in p["models"].items():
            t.add_row(escape(f"{p['category']} ({p['pairs']})") if first else "", escape(shown(name)),
                      _num(v["cos_logodds_mean"], ".4f"), _num(v["p_value"]), _num(v["cos_centred_mean"], ".4f"),
                      _num(v["p_value_centred"]), _num(v["cos_raw_mean"], ".4f"),
                      _num(p["agreement"], ".3f") if first else "", _num(p["agreement_p_value"]) if first else "")
            first = False
    return t


STUDY_EPILOG = """\b
STUDY.toml names the models (features, head, bias), the categories of token
pairs and the null (see docs/study.md). Every mistake in it -- a malformed
file, an unknown token, models on different contexts or vocabularies, a
category of fewer than two pairs -- is one line and exit status 2, before
anything is computed or written.

\b
Prints the findings in words, then two tables (the JSON report's keys in
brackets):
  KL a|b/b|a       mean KL(p_a || p_b) and KL(p_b || p_a) over the contexts,
                   in nats (kl_mean)
  JS, TV           mean Jensen-Shannon divergence (js_mean) and total
                   variation (tv_mean)
  max |L-L~|       the largest difference of log-odds (max_abs_log_odds_diff)
  centred          RMS difference of log-probabilities, each context's mean
                   removed (centred_log_odds_distance)
  d_LLV            the distance of Nielsen et al. (llv_distance; - where
                   undefined)
  k, cc            k on the first model, and the smallest and median of the k
                   canonical correlations of the context subspaces
                   (canonical_correlations)
  cos_logodds      a category's mean identified cosine (cos_logodds_mean) and
                   its p-value (p_value); the same centred (cos_centred_mean,
                   p_value_centred) and raw (cos_raw_mean: not shared by
                   equivalent models, so no p-value)
  agreement        mean correlation across models of a category's identified
                   cosines (agreement) and its p-value (agreement_p_value)
"""


def _scheduler(choice: str) -> str | None:
    """``--scheduler`` as the study takes it: None runs here, ``"local"`` on a LocalCluster."""
    if choice == "none":
        return None
    if choice == "auto":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            return None
        return "local"
    return choice


@main.command(epilog=STUDY_EPILOG)
@click.argument("study_path", metavar="STUDY.toml", type=click.Path(dir_okay=False))
@click.option("--json", "json_path", type=click.Path(dir_okay=False), callback=_json_path,
              help="write the JSON report here")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), callback=_json_path,
              metavar="OUT.md", help="write the report as Markdown here")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), callback=_plot_dir, metavar="DIR",
              help="write the plots (PNG) into this folder (made if missing; needs matplotlib)")
@click.option("--null", "null_draws", type=click.IntRange(min=1, max=100_000), default=None,
              help="random categories of the null, per category  [default: the file's, or 1000]")
@click.option("--seed", type=click.IntRange(min=0, max=2 ** 32 - 1), default=None,
              help="seed of the null  [default: the file's, or 0]")
@click.option("--scheduler", default="auto", metavar="ADDR|local|none",
              help="where the pairs of models run: a Dask scheduler's address, local for a LocalCluster, none "
                   "for this process  [default: a LocalCluster when dask.distributed is installed, else none]")
@click.option("--full", is_flag=True, help="also every cosine, the summary and details in the JSON report")
def study(study_path, json_path, report_path, plot_dir, null_draws, seed, scheduler, full):
    """What linear structure several models share, and whether it is beyond chance:
    distances between the models and the parallelism of categories of token pairs."""
    from allornone.numeric.study import load_study

    outputs = [p for p in (json_path, report_path) if p]
    if len({Path(p).resolve() for p in outputs}) < len(outputs):
        raise click.UsageError("--json and --report name the same file")
    if any(Path(p).resolve() == Path(study_path).resolve() for p in outputs):
        raise click.UsageError("an output would overwrite STUDY.toml")
    if plot_dir:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputFormatError("--plot needs matplotlib (pip install 'allornone[plot]')") from None
    s = load_study(study_path)
    scheduler = _scheduler(scheduler)

    with _phases("study") as say:
        result = s.run(null_draws=null_draws, seed=seed, scheduler=scheduler, progress=lambda msg: say(msg))
    for line in result.summary:
        # (a model's name is the user's text: what is not printable, escaped)
        console.print(shown(line), markup=False, soft_wrap=True)
    print_table(distances_table(result.distances, result.details))
    print_table(parallelism_table(result.parallelism))
    console.print(f"null: {result.null['draws']} draws, seed {result.null['seed']}; {result.elapsed_s:.2f} s",
                  markup=False)
    # the plots first, then the report, then the JSON: the outputs most likely
    # to fail go first, so that a failure leaves the others unwritten
    if plot_dir:
        paths = result.plot(plot_dir)
        err_console.print(f"plots written to {plot_dir}: {', '.join(p.name for p in paths)}", markup=False,
                          soft_wrap=True)
    if report_path:
        try:
            with replacing(report_path) as tmp:
                tmp.write_text(result.to_markdown(), encoding="utf-8")
        except OSError as exc:
            raise InputFormatError(f"--report {report_path}: cannot be written ({exc.strerror or exc})") from None
        err_console.print(f"report written to {report_path}")
    write_json(json_path, result.to_json(full))


# -- compare: its verdict in words, every canonical correlation, its plot ----------------

def equivalence_line(g: dict, rtol: float, gap: float = 1e3) -> str:
    """Whether the two heads are equivalent (same distribution) at ``k`` (Theorem 5),
    with what decides it: the measure of ``el_measures`` behind the verdicts of
    :func:`allornone.numeric.graded.el_decisions`, or, for a report made
    before those were recorded, the EL1-EL3 residuals.

    >>> g = {"k": 2, "k_decided": True, "rel_log_odds_diff": 1e-16,
    ...      "el_residuals": {"EL1": 1e-16, "EL2": 2e-16, "EL3": 0.0},
    ...      "el_verdicts": {"EL1": "holds", "EL2": "holds", "EL3": "holds"}}
    >>> equivalence_line(g, 1e-9)
    'equivalent (decided): EL1-EL3 hold at k = 2, the largest relative residual 2e-16 (EL2) <= rtol 1e-09; ||L - L~||_F / ||L||_F = 1e-16'
    """
    res, ver = g["el_residuals"], g["el_verdicts"]
    tail = f"; ||L - L~||_F / ||L||_F = {g['rel_log_odds_diff']:.3g}"
    failing = [e for e in ("EL1", "EL2", "EL3") if ver[e] == "fails"]
    if g.get("el_measures"):
        return _measured_line(g, rtol, failing, tail, gap)
    if failing:
        worst = max(failing, key=lambda e: res[e])
        return (f"not equivalent (decided): {worst} fails at k = {g['k']}, relative residual {res[worst]:.3g} "
                f"against rtol {rtol:.3g}{tail}")
    worst = max(("EL1", "EL2", "EL3"), key=lambda e: res[e])
    if all(ver[e] == "holds" for e in res):
        return (f"equivalent (decided): EL1-EL3 hold at k = {g['k']}, the largest relative residual "
                f"{res[worst]:.3g} ({worst}) <= rtol {rtol:.3g}{tail}")
    why = "k itself is undecided" if not g.get("k_decided", True) else \
        f"the relative residual {res[worst]:.3g} ({worst}) lies in the band above rtol {rtol:.3g}"
    return f"undecided whether equivalent: at k = {g['k']}, {why}{tail}"


def rtol_to_hold(measures: dict, rtol: float, gap: float = 1e3) -> float | None:
    """The least ``rtol`` at which every measure of ``el_measures`` (decided by
    ``Tolerance.certain`` at ``rtol``: holds when ``value + error <= sqrt(gap)
    rtol``) would hold, its error unchanged (it does not depend on ``rtol``);
    None when that is not below one.

    >>> m = {"value": 1e-12, "bounds": [31.6e-12 - 2e-8, 1e-5]}
    >>> f"{rtol_to_hold({'EL1': m}, 1e-12, 1e3):.3g}"
    '6.32e-10'
    """
    res = math.sqrt(gap)
    need = 0.0
    for m in measures.values():
        error = res * rtol - float(m["bounds"][0])
        need = max(need, (float(m["value"]) + max(error, 0.0)) / res)
    return need if 0.0 < need < 1.0 and math.isfinite(need) else None


#: How :func:`allornone.numeric.graded.compare` names EL3 when the two decided
#: ranks differ: the verdict is then the count itself, not EL3's measure.
RANKS_DIFFER = "the decided ranks differ"


def _bound(x) -> float:
    """A bound of ``el_measures`` as a float (a JSON report writes an infinite one as null)."""
    return math.inf if x is None else float(x)


def _entry(w: dict) -> str:
    """An entry of ``L`` in words: the context's index and the token's name
    where the witness has it (as the table's largest difference is named).

    >>> _entry({"x": 3, "y": 11, "token": "y17"}), _entry({"x": 3, "y": 11})
    ("context 3, token 'y17'", 'context 3, token 11')
    """
    return f"context {w.get('x')}, token {w['token']!r}" if "token" in w else \
        f"context {w.get('x')}, token {w.get('y')}"


def _measured_line(g: dict, rtol: float, failing: list, tail: str, gap: float = 1e3) -> str:
    """:func:`equivalence_line` from what each verdict was decided on (``el_measures``).

    >>> m = {"quantity": "sine of the largest angle", "value": 0.25, "bounds": [1e-9, 1e-6]}
    >>> g = {"k": 2, "k_decided": True, "rel_log_odds_diff": 0.1, "el_residuals": {},
    ...      "el_verdicts": {"EL1": "fails", "EL2": "holds", "EL3": "undecided"}, "el_measures": {"EL1": m}}
    >>> _measured_line(g, 1e-9, ["EL1"], "")
    'not equivalent (decided): EL1 fails at k = 2: sine of the largest angle 0.25 > 1e-06'
    """
    ms, ver = g["el_measures"], g["el_verdicts"]
    same = g.get("same_distribution") or {}
    if same.get("verdict") == "fails" and not failing:
        w = same["witness"]
        # the clause is said only where it is true: a measure in its band is not within its bound
        within = all(float(m["value"]) <= _bound(m["bounds"][0]) for m in ms.values())
        clause = (f", although EL1-EL3 measured against sigma_1 are within theirs at k = {g['k']}" if within
                  else "")
        return (f"not equivalent (decided): L and L~ differ at {_entry(w)}, "
                f"{same['ratio']:.3g} times the tolerance and rounding of that entry{clause}{tail}")
    if failing:
        e = failing[0]
        if ms[e]["quantity"].startswith(RANKS_DIFFER):
            # no bijection between spaces of other dimensions: the ranks decide, and
            # the measure recorded beside them was not compared with anything
            return f"not equivalent (decided): {e} fails at k = {g['k']}: {ms[e]['quantity']}{tail}"
        return (f"not equivalent (decided): {e} fails at k = {g['k']}: {ms[e]['quantity']} "
                f"{ms[e]['value']:.3g} > {_bound(ms[e]['bounds'][1]):.3g}{tail}")
    if all(v == "holds" for v in ver.values()):
        by = [e for e in ("EL1", "EL2", "EL3") if e in ms and ms[e].get("decided_by")]
        if by:
            # the measures' own bounds left these open: L = L~ decided them
            return (f"equivalent (decided): L = L~ entry by entry at rtol {rtol:.3g}, so EL1-EL3 hold at "
                    f"k = {g['k']} (Theorem 5; {', '.join(by)} alone undecided by {'its' if len(by) == 1 else 'their'}"
                    f" measure){tail}")
        worst = max(ms, key=lambda e: ms[e]["value"])
        return (f"equivalent (decided): EL1-EL3 hold at k = {g['k']}, the largest measure {ms[worst]['value']:.3g} "
                f"({worst}) <= its bound {ms[worst]['bounds'][0]:.3g} (rtol {rtol:.3g}){tail}")
    return f"undecided whether equivalent: at k = {g['k']}, {_undecided_why(g, rtol, gap)}{tail}"


def _undecided_why(g: dict, rtol: float, gap: float = 1e3) -> str:
    """What left an undecided comparison undecided, in words with its numbers: ``k``;
    else the first measure that cannot decide its condition (in its band, or an
    error too large for it to hold); else the two ranks differing; else ``L = L~``
    entry by entry (which undoes EL1-EL3 holding when it does not hold).

    >>> m = {"quantity": "sine", "value": 1e-12, "bounds": [-2e-6, 2e-3]}
    >>> g = {"k": 3, "k_decided": True, "el_measures": {"EL1": m, "EL2": m, "EL3": m},
    ...      "el_verdicts": {"EL1": "undecided", "EL2": "undecided", "EL3": "undecided"}}
    >>> _undecided_why(g, 1e-12).split(" (all three")[0]
    'EL1: sine 1e-12, but the error bound of the truncations 2e-06 exceeds sqrt(gap) rtol = 3.16e-11, within which it would hold, and it fails only above 0.002'
    """
    if not g.get("k_decided", True):
        return "k itself is undecided"
    ms, ver = g["el_measures"], g["el_verdicts"]
    res = math.sqrt(gap)
    ranks = None
    for e in ("EL1", "EL2", "EL3"):
        m = ms[e]
        if ver[e] != "undecided":
            continue
        if m["quantity"].startswith(RANKS_DIFFER):
            ranks = m["quantity"]
            continue
        value, lo, hi = float(m["value"]), _bound(m["bounds"][0]), _bound(m["bounds"][1])
        if not math.isfinite(lo):
            why = (f"{e}: {m['quantity']} {value:.3g}, but the error of the truncations at k = {g['k']} has no "
                   "bound (sigma_k is not apart from sigma_k+1 by more than the factors' error)")
        elif lo < 0:
            # holds needs value + error <= sqrt(gap) rtol: an error beyond that can never hold
            why = (f"{e}: {m['quantity']} {value:.3g}, but the error bound of the truncations "
                   f"{res * rtol - lo:.3g} exceeds sqrt(gap) rtol = {res * rtol:.3g}, within which it would hold, "
                   f"and it fails only above {hi:.3g}")
        elif value > lo:
            why = f"{e}: {m['quantity']} {value:.3g} lies between {lo:.3g} and {hi:.3g}"
        else:
            continue  # its measure holds: something else made it undecided
        need = rtol_to_hold(ms, rtol, gap)
        if need is not None and need > rtol:
            # what the answer would take: the measures and their errors do not
            # depend on rtol, so from this rtol on all three are within it
            why += f" (all three measures hold, their errors included, from rtol = {need:.2g} on)"
        return why
    same = g.get("same_distribution") or {}
    if ranks is not None:
        # graded.compare fails EL3 on differing ranks only when both are decided and
        # L = L~ does not hold entry by entry; the first model's k is decided here
        if same.get("verdict") == "holds":
            return (f"EL3: {ranks}, but L = L~ entry by entry at rtol {rtol:.3g}, so a rank counted below a "
                    "model's zero bound is not to be trusted")
        return f"EL3: {ranks}, but the second model's rank is undecided"
    if same and same.get("verdict") != "holds":
        worst = max(ms, key=lambda e: ms[e]["value"])
        head = (f"EL1-EL3 measured against sigma_1 are within their bounds (the largest measure "
                f"{ms[worst]['value']:.3g} ({worst}) <= {_bound(ms[worst]['bounds'][0]):.3g}), but whether L = L~ "
                "entry by entry is undecided")
        w, ratio = same.get("witness") or {}, float(same.get("ratio", 0.0))
        where = _entry(w)
        if ratio > 1:
            return (f"{head}: at {where}, L and L~ differ by {ratio:.3g} times that entry's tolerance and rounding, "
                    f"beyond it but not beyond gap {gap:g} times it, where it would fail")
        return (f"{head}: no entry differs by more than its tolerance and rounding (at most {ratio:.3g} times it, "
                f"at {where}), but the rounding bound of some entries is too large (or not finite) to tell that "
                f"every one is within rtol {rtol:.3g}")
    open_ = [e for e in ("EL1", "EL2", "EL3") if ver[e] == "undecided"]
    return f"{', '.join(open_)} undecided"


def cosines_line(cos) -> str:
    """Every canonical correlation (cosine of a principal angle), largest first, with their min, median and max.

    >>> cosines_line([1.0, 0.5, 0.25])
    'min 0.25, median 0.5, max 1 (3): 1 0.5 0.25'
    >>> cosines_line([])
    '-'
    """
    c = np.asarray([v for v in cos if v is not None], dtype=float)
    if not c.size:
        return "-"
    return (f"min {c.min():.3g}, median {np.median(c):.3g}, max {c.max():.3g} ({c.size}): "
            + " ".join(f"{v:.3g}" for v in c))


def _rows_of_logits(a, b):
    """``(lo, La, Lb)`` over blocks of contexts: both models' logits ``F G^T``, a block
    of rows at a time, the features read from their file as they are needed (a
    feature file larger than memory is never read whole)."""
    from allornone.numeric.rows import read_rows, row_block

    def features(m):
        return m.features if hasattr(m, "features") else m.F

    Fa, Fb = features(a), features(b)
    Ga, Gb = np.asarray(a.G, dtype=float), np.asarray(b.G, dtype=float)
    step = row_block(max(Ga.shape[0], 1), a.m)
    for lo in range(0, a.m, step):
        hi = min(a.m, lo + step)
        yield lo, read_rows(Fa, lo, hi) @ Ga.T, read_rows(Fb, lo, hi) @ Gb.T


def per_context_kl(a, b) -> tuple[np.ndarray, np.ndarray]:
    """``KL(p_a || p_b)`` and ``KL(p_b || p_a)`` of each context, in nats, a block of contexts at a time."""
    out = np.empty((2, a.m))
    for lo, La, Lb in _rows_of_logits(a, b):
        hi = lo + La.shape[0]
        la = La - La.max(axis=1, keepdims=True)
        lb = Lb - Lb.max(axis=1, keepdims=True)
        la -= np.log(np.exp(la).sum(axis=1, keepdims=True))
        lb -= np.log(np.exp(lb).sum(axis=1, keepdims=True))
        out[0, lo:hi] = (np.exp(la) * (la - lb)).sum(axis=1)
        out[1, lo:hi] = (np.exp(lb) * (lb - la)).sum(axis=1)
    return np.maximum(out[0], 0.0), np.maximum(out[1], 0.0)


def _sampled_log_odds(a, b, points: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Both models' log-odds ``L[x, y] = l(x, y) - l(x, pivot)`` at (at most)
    ``points`` entries drawn at random (every entry when there are no more),
    a block of contexts at a time."""
    size = a.m * a.n
    flat = np.arange(size) if size <= points else np.sort(np.random.default_rng(seed).choice(size, points,
                                                                                             replace=False))
    x, y = np.empty(flat.size), np.empty(flat.size)
    for lo, La, Lb in _rows_of_logits(a, b):
        first, last = np.searchsorted(flat, [lo * a.n, (lo + La.shape[0]) * a.n])
        rows, cols = np.divmod(flat[first:last], a.n)
        rows -= lo
        x[first:last] = La[rows, cols] - La[rows, a.pivot]
        y[first:last] = Lb[rows, cols] - Lb[rows, b.pivot]
    return x, y


def plot_comparison(a, b, result, path, names=("first", "second"), points: int = 20000, seed: int = 0) -> None:
    """The comparison of two models in one figure: the sines of every principal angle
    (context and token side) beside Wedin's bound, a histogram of the per-context KL
    divergences, a scatter of the two models' log-odds (at most ``points`` of them), and
    the spectra of both ``L``. PNG, SVG or PDF by ``path``'s suffix; needs matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputFormatError("--plot needs matplotlib (pip install 'allornone[plot]')") from None
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (ax_angle, ax_kl), (ax_lo, ax_sp) = axes
    for side, angles, style in (("context", result.angles_context, "o-"), ("token", result.angles_token, "s--")):
        s = np.sort(np.sin(np.asarray(angles, dtype=float)))[::-1]
        if s.size:
            ax_angle.plot(np.arange(1, s.size + 1), s, style, ms=3, lw=1, label=f"sin of angles, {side} side")
    bound = result.wedin_bound
    if bound is not None and np.isfinite(bound):
        ax_angle.axhline(min(bound, 1.0), color="C3", lw=1.2,
                         label=f"Wedin's bound {bound:.3g}" + (" (above 1)" if bound > 1 else ""))
    ax_angle.set_ylim(-0.03, 1.05)
    ax_angle.set_xlabel("principal angle (largest first)")
    ax_angle.set_ylabel("sine")
    ax_angle.set_title(f"principal angles at k = {result.k}")
    ax_angle.legend(fontsize=8, loc="lower left")
    kl_ab, kl_ba = per_context_kl(a, b)
    top = max(float(kl_ab.max()), float(kl_ba.max()), 1e-300)
    bins = np.linspace(0.0, top, 40) if top > 0 else 10
    ax_kl.hist(kl_ab, bins=bins, alpha=0.6, label=f"KL({names[0]} || {names[1]})")
    ax_kl.hist(kl_ba, bins=bins, alpha=0.6, label=f"KL({names[1]} || {names[0]})")
    ax_kl.set_xlabel("KL divergence of a context (nats)")
    ax_kl.set_ylabel("contexts")
    ax_kl.set_title(f"per-context KL: mean {result.kl_mean:.3g}, max {result.kl_max:.3g}")
    ax_kl.legend(fontsize=8)
    x, y = _sampled_log_odds(a, b, points, seed)
    ax_lo.scatter(x, y, s=2, alpha=0.3, lw=0)
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    ax_lo.plot([lo, hi], [lo, hi], color="C3", lw=0.8, label="equal log-odds")
    ax_lo.set_xlabel(f"log-odds, {names[0]}")
    ax_lo.set_ylabel(f"log-odds, {names[1]}")
    ax_lo.set_title(f"log-odds ({x.size} of {a.m * a.n}): max |L - L~| = {result.max_abs_log_odds_diff:.3g}")
    ax_lo.legend(fontsize=8, loc="upper left")
    for j, (name, sp) in enumerate(zip(names, result.spectra)):
        s = np.asarray(sp.sigma_L, dtype=float)
        if s.size and s[0] > 0:
            ax_sp.semilogy(np.arange(1, s.size + 1), np.maximum(s / s[0], 1e-17), color=f"C{j}", lw=1.2,
                           label=f"{name}: sigma(L) / sigma_1")
    ax_sp.axvline(result.k + 0.5, color="grey", lw=0.8, label=f"k = {result.k}")
    ax_sp.set_xlabel("i")
    ax_sp.set_title("spectra of L")
    ax_sp.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    try:
        with replacing(path) as tmp:
            fig.savefig(tmp, dpi=100)
    except OSError as exc:
        raise InputFormatError(f"--plot {path}: cannot be written ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
