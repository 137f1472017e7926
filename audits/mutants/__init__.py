"""Planted bugs: named, documented broken privatizers and the checks that catch them.

:data:`MUTANTS` (the broken variants), :data:`CONTROLS` (their correct counterparts),
:func:`check_mutant` / :func:`check_all` (accountant, ledger and audit checks). See
:mod:`privacct.audits.mutants.registry` and :mod:`privacct.audits.mutants.planted_privatizers`.
"""

from .registry import (CHECKS, CONTROLS, MUTANTS, LearnerMutant, Mutant, MutantReport, check_all, check_mutant,
                       ledger_shape_problems)

__all__ = ["CHECKS", "CONTROLS", "MUTANTS", "LearnerMutant", "Mutant", "MutantReport", "check_all", "check_mutant",
           "ledger_shape_problems"]
