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
from typing import Any, Iterable


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


@dataclass(frozen=True)
class Decision:
    """A verdict with its evidence.

    ``residual`` is the size of what must vanish for the claim to hold (an exact
    ``Fraction`` on the exact side, a float on the float side); ``tolerance`` is
    ``None`` on the exact side and ``(hold_below, fail_above)`` on the float side.

    >>> Decision.exact(True).truth
    <Truth.HOLDS: 'holds'>
    >>> Decision.all([Decision.exact(True), Decision.exact(False)]).truth
    <Truth.FAILS: 'fails'>
    """

    truth: Truth
    residual: Any = 0
    tolerance: tuple[float, float] | None = None
    detail: dict = field(default_factory=dict, compare=False)

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
        residual = max((d.residual for d in decisions), default=0)
        tolerances = [d.tolerance for d in decisions if d.tolerance is not None]
        return cls(truth, residual, tolerances[0] if tolerances else None)

    def __str__(self) -> str:
        if self.is_exact:
            return f"{self.truth.value} (exact, residual {self.residual})"
        lo, hi = self.tolerance
        return (f"{self.truth.value} (residual {float(self.residual):.3g}; holds <= {lo:.3g}, "
                f"fails > {hi:.3g})")
