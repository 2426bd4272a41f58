"""What runs the records: the machinery behind ``allornone check``, ``proof``,
``edges`` and ``verify``, kept apart from the results it runs.

- :mod:`~allornone.theorems.engine.logic` -- the vocabulary of predicates the
  statements are written in;
- :mod:`~allornone.theorems.engine.record` -- the record types (statement,
  hypotheses, proof steps, edges, instances);
- :mod:`~allornone.theorems.engine.runner` -- sample, decide exactly and in
  floats, cross-validate, report;
- :mod:`~allornone.theorems.engine.selftest` -- instances built to break every
  check, which the runner must catch;
- :mod:`~allornone.theorems.engine.proofs`, :mod:`~allornone.theorems.engine.generic`,
  :mod:`~allornone.theorems.engine.rewrite` -- annotated proofs and the generic
  (symbolic) verification of their identity steps;
- :mod:`~allornone.theorems.engine.edges` -- hypotheses dropped and boundaries;
- :mod:`~allornone.theorems.engine.verify` -- verdicts on a user's own models;
- :mod:`~allornone.theorems.engine.invariance` -- the metamorphic harness of the
  float verdicts;
- :mod:`~allornone.theorems.engine.cli` -- the ``allornone`` command.

Nothing here states a result: every theorem, its hypotheses and its proof live
in the result packages of :mod:`allornone.theorems`.
"""
