"""`interp train --node-loss`: the node heads of :mod:`interp.api.node_loss` as the objective :func:`interp.jobs.train.train` takes.

Usage::

    from interp.api.specs import DataSpec
    from interp.jobs.train import TrainConfig, train
    train(TrainConfig(data=DataSpec("mqnli", "runs/mqnli/fair.jsonl"), node_loss=("all",)), "runs/mqnli/model_nodes")
"""

from __future__ import annotations

from typing import Sequence

from interp.api.node_loss import READS, NodeLoss, node_variables
from interp.api.objects import Task


def node_objective(variables: Sequence[str], task: Task, *, read: str = "cls", weight: float = 1.0, seed: int = 0):
    """The ``objective`` :func:`interp.jobs.train.train` takes: builds a :class:`~interp.api.node_loss.NodeLoss` for a model
    and its training examples."""

    def build(model, tokenizer, examples: Sequence) -> NodeLoss:
        return NodeLoss(model, tokenizer, task, examples, variables, read=read, weight=weight, seed=seed)

    return build


__all__ = ["READS", "node_objective", "node_variables"]
