"""The eight semantic fragments (Richardson, Hu, Moss & Sabharwal 2020) as behavioral tasks: ``--task fragment:NAME``."""

from interp.tasks.fragments.data import FRAGMENTS, LABELS, FragmentPair, load_fragment
from interp.tasks.fragments.task import fragment_task

__all__ = ["FRAGMENTS", "LABELS", "FragmentPair", "fragment_task", "load_fragment"]
