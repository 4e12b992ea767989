"""The objects a job holds, passes on and names in its signatures, defined in the layers beneath ``api``.

Jobs stand on ``api`` (``tests/test_layers.py``): they call what this layer offers and name the types of what it
returns, and the vocabulary of locations, from here. Each name is the lower layer's object itself, not a copy:
``interp.api.objects.Location is interp.hooks.locations.Location``.
"""

from interp.engine.batched import PRECISIONS
from interp.hooks.locations import ATTN_OUT, MLP_OUT, RESID_MID, Z, Location, all_locations, component_locations, parse_locations
from interp.tasks import Task, TaskGroup
from interp.tasks.base import WordPairs
from interp.tasks.stages import BehavioralStage

__all__ = ["ATTN_OUT", "BehavioralStage", "Location", "MLP_OUT", "PRECISIONS", "RESID_MID", "Task", "TaskGroup", "WordPairs", "Z",
           "all_locations", "component_locations", "parse_locations"]
