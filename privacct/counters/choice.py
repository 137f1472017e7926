"""What a learner's ``tight`` calibration chose for its continual counters and its budget split, and why
(docs/counters.md#choosing-for-regret): one record any learner can put in its log's parameters as ``tight_choice``,
which the report's tight column prints (audits/report). Pure data: no numerics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class TightChoice:
    """What a learner's ``tight`` calibration chose for its continual counters and its budget split, and why
    (docs/counters.md#choosing-for-regret). Recorded in the log's parameters as ``tight_choice``
    (:meth:`to_params`; read back with :meth:`from_params`).

    ``strategy``: the counter that runs; ``reference``: what the choice was ranked against (the tree at the printed
    budget split; where the tree's shift allows no update within K, the choice is instead the updating candidate of
    least bound, which the reason names, and the ``reference_*`` figures stay the tree's); ``ranked``: False when the proxy could not rank the candidates (the reference is then kept and
    ``reason`` says why); ``reason``: one line for the report's tight column; ``proxy``: the proxy's name and the docs
    anchor of its equations; ``figures``: the proxy's figures, ``(name, value)`` pairs (chosen and reference)."""

    strategy: str
    reference: str
    ranked: bool
    reason: str
    proxy: str
    figures: tuple[tuple[str, float], ...] = ()

    def figure(self, name: str) -> float:
        """The figure ``name`` (KeyError if absent)."""
        return dict(self.figures)[name]

    def line(self) -> str:
        """The report's tight-column text: the strategy, then the reason."""
        return f"{self.strategy}: {self.reason}"

    def to_params(self) -> dict[str, Any]:
        """A JSON object for ``MechanismLog.parameters``."""
        return {"strategy": self.strategy, "reference": self.reference, "ranked": self.ranked, "reason": self.reason,
                "proxy": self.proxy, "figures": {k: float(v) for k, v in self.figures}}

    @classmethod
    def from_params(cls, d: Mapping[str, Any]) -> "TightChoice":
        """The record of :meth:`to_params` (e.g. ``log.params["tight_choice"]``)."""
        return cls(str(d["strategy"]), str(d["reference"]), bool(d["ranked"]), str(d["reason"]), str(d["proxy"]),
                   tuple((str(k), float(v)) for k, v in dict(d.get("figures", {})).items()))


def tree_kept(why: str) -> TightChoice:
    """The record of a learner whose ``tight`` keeps the binary tree because no proxy ranks its counters (the issue's
    rule: where the proxy cannot rank strategies, keep the tree and say so); ``why``: the learner's own sentence."""
    return TightChoice("tree", "tree", False, f"tree kept: {why}", "none")


__all__ = ["TightChoice", "tree_kept"]
