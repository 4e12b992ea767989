"""Node supervision: train the causal model's intermediate variables beside the label (Geiger et al. 2019, §5), for
:func:`interp.api.training.fine_tune` (``node_loss=``) and ``interp train --node-loss``.

Geiger, Cases, Karttunen & Potts (2019) train every model on "a weighted sum
of the error on 12 prediction tasks" (their Figure 4): the label, and the
relation of each aligned pair of subexpressions, the nodes of the
composition tree. Without them, they note, a training set is not fair to the
learner, and every model fails the hardest split.

Here each supervised variable of the task's causal model (MQNLI: a tree
node, e.g. ``subj_np``, whose value is a relation) gets a softmax head of
its own, a linear map from the last block's output to the variable's
values, read either at [CLS] (``read="cls"``) or at the variable's aligned
tokens, their vectors concatenated (``read="tokens"``: ``subj_np`` at its
adjective and noun in both sentences). Its cross-entropy against the value
the causal model gives the example, averaged over the variables and
weighted by ``node_weight``, is added to the label's. The paper weights each
term by the length of its expressions; the weights here are equal.

The heads are scaffolding: they train, and resume after an interrupted
epoch, with the model, but the checkpoint holds the classifier alone. The
node terms take a second forward pass of each batch (with the hooks of
:func:`interp.hooks.hooked` reading the last block), so a step costs about
twice a plain one.

Usage::

    task = interp.load_task("mqnli", data_file="runs/mqnli/fair.jsonl")
    model = interp.fine_tune("minilm", task, task.examples(("train",)), node_loss=("all",))
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from interp.core.errors import ConfigError, named
from interp.hooks import hooked, n_layers
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import collate, encode_examples, location_tokens
from interp.models.decoders import template_of
from interp.hooks.locations import Location
from interp.tasks import Task

#: Where the node heads read the last block: [CLS], or each variable's aligned tokens.
READS: tuple[str, ...] = ("cls", "tokens")


def node_variables(names: Sequence[str], task: Task) -> tuple[str, ...]:
    """``names`` as the task's variables: ``("all",)`` is every variable with a default alignment.

    Raises:
        ConfigError: naming ``node_loss``: a task without a causal model, an unknown variable, none named.
    """
    if task.causal_model is None:
        raise ConfigError(f"{named('node_loss')}: task {task.name!r} has no causal model whose variables could be supervised")
    chosen = task.variables if tuple(names) == ("all",) else tuple(dict.fromkeys(names))
    unknown = [v for v in chosen if v not in task.alignment]
    if unknown or not chosen:
        raise ConfigError(f"{named('node_loss', repr(','.join(names)))}: name variables of task {task.name!r} "
                          f"({', '.join(task.variables)}) or all")
    return chosen


class NodeLoss(nn.Module):
    """The node terms for one model and its training examples: call it with a batch's example indices.

    Attributes:
        heads: variable -> ``nn.Linear(width, n_values)``; width is d_model at [CLS], or tokens × d_model.
        values: variable -> int64 ``[n_examples]``, each example's value code (:meth:`~interp.tasks.base.Task.values`).
        locations: variable -> the :class:`~interp.hooks.locations.Location` its head reads.
    """

    def __init__(self, model, tokenizer, task: Task, examples: Sequence, variables: Sequence[str], *,
                 read: str = "cls", weight: float = 1.0, seed: int = 0) -> None:  # fmt: skip
        super().__init__()
        if read not in READS:
            raise ConfigError(f"{named('node_read', repr(read))}: choose {' or '.join(READS)}")
        causal = task.build_causal_model(examples)
        last = n_layers(model)  # hidden index of the last block's output
        self.model, self.weight, self.pad = [model], weight, tokenizer.pad_token_id  # a list: not a submodule
        self.encoded = encode_examples(examples, tokenizer, "first", task.labels, template_of(model))
        self.locations = {v: Location(last, ("cls",) if read == "cls" else task.alignment[v]) for v in variables}
        self.values, names = {}, {}
        for v in variables:
            found = task.values(causal, examples, v)
            self.values[v], names[v] = torch.as_tensor(found.codes, dtype=torch.long), found.names
        # Every example covers the same tokens at a variable's roles (checked), so each head has one width.
        widths = {v: len(location_tokens(self.encoded, loc.roles, f"`node_loss=` {v}")[0]) * model.config.hidden_size
                  for v, loc in self.locations.items()}  # fmt: skip
        with torch.random.fork_rng(devices=[]):  # seeded heads; the caller's random stream is left as it was
            torch.manual_seed(seed)
            self.heads = nn.ModuleDict({v: nn.Linear(widths[v], len(names[v])) for v in variables})
        self.to(next(model.parameters()).device)

    def forward(self, idx: list[int], step: int = 0) -> torch.Tensor:
        """``weight`` × the mean over variables of the heads' cross-entropy (nats) on examples ``idx``: a tensor ``[]``."""
        model = self.model[0]
        device = next(model.parameters()).device
        batch = collate([self.encoded[i] for i in idx], self.pad)
        reads = list(dict.fromkeys(self.locations.values()))
        with hooked(model, batch["positions"], read=reads, keep_grad=True) as trace:
            model(**batch_inputs(model, batch, device))
        terms = [F.cross_entropy(self.heads[v](trace[loc]), self.values[v][idx].to(device)) for v, loc in self.locations.items()]
        return self.weight * torch.stack(terms).mean()


__all__ = ["READS", "NodeLoss", "node_variables"]
