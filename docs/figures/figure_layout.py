"""Where the texts of a matplotlib figure land once it is drawn, and what is
wrong with them: two texts (or a text and a legend) that overlap, a label
placed in data coordinates that leaves its axes, a text that leaves the figure.

``make_figures.py`` runs :func:`check` on every figure before saving it, so the
site build stops on a figure whose labels collide; the docs tests plant a bad
figure to show that each problem is seen.

Only texts that are drawn count: invisible or empty ones, and tick labels
outside the view limits (matplotlib does not draw them), are skipped. A text's
box is matplotlib's own extent of the rendered string (an annotation's without
its arrow); a legend counts as one box, its own entries are laid out by
matplotlib.
"""
from __future__ import annotations

import contextlib

#: Overlaps and overhangs up to this many pixels (at the figure's dpi) are
#: rounding, not collisions.
SLACK = 0.5


class LayoutError(ValueError):
    """A figure whose texts overlap or leave their axes or the figure."""


@contextlib.contextmanager
def _recording():
    """Record each text as it is drawn, with its extent."""
    from matplotlib.text import Text

    drawn = []
    draw = Text.draw

    def recording_draw(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            # Text's own extent: an Annotation's would include its arrow
            drawn.append((self, Text.get_window_extent(self, renderer)))

    Text.draw = recording_draw
    try:
        yield drawn
    finally:
        Text.draw = draw


def drawn_texts(fig) -> list:
    """``[(text, bbox in display pixels)]`` for every text drawn in ``fig``."""
    with _recording() as drawn:
        fig.canvas.draw()
    return list(drawn)


def _name(text) -> str:
    return repr(text.get_text().strip())


def _overlap(a, b) -> bool:
    dx = min(a.x1, b.x1) - max(a.x0, b.x0)
    dy = min(a.y1, b.y1) - max(a.y0, b.y0)
    return dx > SLACK and dy > SLACK


def _inside(inner, outer) -> bool:
    return (inner.x0 >= outer.x0 - SLACK and inner.x1 <= outer.x1 + SLACK and inner.y0 >= outer.y0 - SLACK
            and inner.y1 <= outer.y1 + SLACK)


def text_problems(fig) -> list[str]:
    """What is wrong with the texts of ``fig`` (empty when nothing)."""
    drawn = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    legends = [leg for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)] if leg is not None]
    in_legend = {id(t) for leg in legends for t in [*leg.get_texts(), leg.get_title()]}
    labels = {id(t): ax for ax in fig.axes for t in ax.texts}
    out = []
    boxes = []
    for text, box in drawn:
        if not _inside(box, fig.bbox):
            out.append(f"{_name(text)} leaves the figure")
        ax = labels.get(id(text))
        if ax is not None and not _inside(box, ax.bbox):
            out.append(f"{_name(text)} leaves its axes")
        if id(text) not in in_legend:
            boxes.append((_name(text), box))
    for leg in legends:
        if leg.get_visible():
            box = leg.get_window_extent(renderer)
            if not _inside(box, fig.bbox):
                out.append("a legend leaves the figure")
            boxes.append(("the legend of " + (", ".join(repr(t.get_text()) for t in leg.get_texts()[:2]) or "?"),
                          box))
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1:]:
            if _overlap(a, b):
                out.append(f"{name_a} and {name_b} overlap")
    return out


def check(fig, name: str) -> None:
    """Raise :class:`LayoutError` if any text of ``fig`` overlaps another or
    leaves its axes or the figure."""
    problems = text_problems(fig)
    if problems:
        raise LayoutError(f"figure {name}: " + "; ".join(problems))
