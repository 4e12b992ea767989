"""Several processes sharing one interventions run: units dealt out by rank, launched by ``torchrun``.

Usage::

    torchrun --nproc_per_node 2 -m interp.cli intervene --model M --out F --locations L ...

``torchrun`` sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and the rendezvous
address; :func:`workers` joins the process group (``gloo`` on CPU, ``nccl``
on GPU) and leaves it in ``finally``. Without those variables it is a single
worker and touches nothing of ``torch.distributed``. Each worker runs the
units whose index is its rank modulo the world size and writes its own shards
(:mod:`interp.jobs.shards`); rank 0 prepares the shard folder and
assembles the file.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Iterator, Sequence, TypeVar

import torch

T = TypeVar("T")


@dataclass(frozen=True)
class Workers:
    """This process's place among the workers of a run."""

    rank: int = 0
    world: int = 1

    @property
    def leader(self) -> bool:
        return self.rank == 0

    def mine(self, items: Sequence[T]) -> list[T]:
        """The items this worker runs: every ``world``-th one from index ``rank``."""
        return list(items[self.rank :: self.world])

    def barrier(self) -> None:
        if self.world > 1:
            torch.distributed.barrier()


@contextmanager
def workers(device: torch.device) -> Iterator[Workers]:
    """Join the process group ``torchrun`` describes, if any; yields this process's :class:`Workers`."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        yield Workers()
        return
    dist = torch.distributed
    backend = "nccl" if device.type == "cuda" else "gloo"
    joined = not dist.is_initialized()
    if joined:
        # Ranks wait at barriers while others finish their units: allow long runs.
        dist.init_process_group(backend, timeout=timedelta(hours=24))
    try:
        yield Workers(dist.get_rank(), dist.get_world_size())
    finally:
        if joined:
            dist.destroy_process_group()
