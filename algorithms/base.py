"""Kept so that code written against earlier privacct keeps importing: the learner contract lives in
:mod:`privacct.algorithms.contract` (renamed so that file names say what they hold; issue 22)."""

from .contract import *  # noqa: F401,F403
from .contract import __all__  # noqa: F401
