"""Three-valued verdicts.

Exact checks decide every question: their verdict is ``HOLDS`` or ``FAILS``.
Floating-point checks compare a residual with a tolerance and may also answer
``UNDECIDED`` when the residual falls between "clearly zero" and "clearly not".
A :class:`Decision` carries the verdict together with the residual and the
tolerance that produced it, so a float verdict always states its tolerance.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple


class Truth(enum.Enum):
    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"

    def __bool__(self) -> bool:  # pragma: no cover - guard against misuse
        raise TypeError("a Truth is three-valued; compare it with Truth.HOLDS explicitly")

    @classmethod
    def of(cls, value: bool) -> "Truth":
        return cls.HOLDS if value else cls.FAILS

    def negate(self) -> "Truth":
        if self is Truth.UNDECIDED:
            return self
        return Truth.FAILS if self is Truth.HOLDS else Truth.HOLDS


class Bounds(NamedTuple):
    """The two bounds of a float verdict: a residual at most ``hold_below``
    holds, one above ``fail_above`` fails, one in between is undecided.

    A plain pair (it compares equal to ``(hold_below, fail_above)`` and is
    written to JSON as a list) that prints what its numbers mean.

    >>> b = Bounds(2e-12, 2e-09)
    >>> print(b)
    holds if residual <= 2e-12, fails if > 2e-09, undecided in between
    >>> b == (2e-12, 2e-09), list(b)
    (True, [2e-12, 2e-09])
    """

    hold_below: float
    fail_above: float

    def __str__(self) -> str:
        return (f"holds if residual <= {self.hold_below:.3g}, fails if > {self.fail_above:.3g}, "
                "undecided in between")


@dataclass(frozen=True)
class Decision:
    """A verdict with its evidence.

    ``residual`` is the size of what must vanish for the claim to hold (an exact
    ``Fraction`` on the exact side, a float on the float side); ``tolerance`` is
    ``None`` on the exact side and the pair ``(hold_below, fail_above)`` on the
    float side (kept as :class:`Bounds`, which names its two numbers).

    >>> Decision.exact(True).truth
    <Truth.HOLDS: 'holds'>
    >>> Decision.all([Decision.exact(True), Decision.exact(False)]).truth
    <Truth.FAILS: 'fails'>
    >>> Decision(Truth.HOLDS, 0.0, (3.56e-307, 3.56e-304))
    Decision(holds, residual 0, hold_below 3.56e-307, fail_above 3.56e-304)
    >>> Decision.exact(False, 2)
    Decision(fails, exact, residual 2)
    """

    truth: Truth
    residual: Any = 0
    tolerance: tuple[float, float] | None = None
    detail: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.tolerance is not None and type(self.tolerance) is not Bounds:
            object.__setattr__(self, "tolerance", Bounds(*self.tolerance))

    def __repr__(self) -> str:
        # the verdict and its numbers by name, not the fields' raw reprs
        extra = f", detail {self.detail!r}" if self.detail else ""
        if self.is_exact:
            return f"Decision({self.truth.value}, exact, residual {self.residual}{extra})"
        lo, hi = self.tolerance
        return (f"Decision({self.truth.value}, residual {float(self.residual):.3g}, hold_below {lo:.3g}, "
                f"fail_above {hi:.3g}{extra})")

    @property
    def is_exact(self) -> bool:
        """True for a verdict of the exact side (no tolerance involved)."""
        return self.tolerance is None

    @property
    def holds(self) -> bool:
        return self.truth is Truth.HOLDS

    @property
    def fails(self) -> bool:
        return self.truth is Truth.FAILS

    @property
    def undecided(self) -> bool:
        return self.truth is Truth.UNDECIDED

    @classmethod
    def exact(cls, value: bool, residual: Any = 0, **detail) -> "Decision":
        return cls(Truth.of(bool(value)), residual, None, detail)

    def negate(self) -> "Decision":
        return Decision(self.truth.negate(), self.residual, self.tolerance, self.detail)

    @classmethod
    def all(cls, decisions: Iterable["Decision"]) -> "Decision":
        """Kleene conjunction: fails if any fails, else undecided if any is."""
        decisions = list(decisions)
        truths = [d.truth for d in decisions]
        if Truth.FAILS in truths:
            truth = Truth.FAILS
        elif Truth.UNDECIDED in truths:
            truth = Truth.UNDECIDED
        else:
            truth = Truth.HOLDS
        if decisions and all(d.tolerance is not None for d in decisions):
            # float: the residual and the bounds of one decision that gives the
            # verdict, so that they read against each other (the largest
            # residual beside another's bounds mixed units: "holds (residual
            # 5e-13; holds <= 2e-308)"): the first that fails, or is undecided,
            # or, all holding, the one nearest its bound
            same = [d for d in decisions if d.truth is truth]
            pick = same[0] if truth is not Truth.HOLDS else max(same, key=_share_of_bound)
            return cls(truth, pick.residual, pick.tolerance)
        residual = max((d.residual for d in decisions), default=0)
        tolerances = [d.tolerance for d in decisions if d.tolerance is not None]
        return cls(truth, residual, tolerances[0] if tolerances else None)

    def __str__(self) -> str:
        if self.is_exact:
            return f"{self.truth.value} (exact, residual {self.residual})"
        lo, hi = self.tolerance
        return (f"{self.truth.value} (residual {float(self.residual):.3g}; holds <= {lo:.3g}, "
                f"fails > {hi:.3g})")


def _share_of_bound(d: "Decision") -> float:
    """How much of its "holds" bound a float decision's residual takes (0 for
    an exact zero, infinite beyond a bound of zero)."""
    r, lo = float(d.residual), float(d.tolerance[0])
    if r == 0:
        return 0.0
    return r / lo if lo > 0 else float("inf")
