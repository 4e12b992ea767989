"""The objects a job holds, passes on and names in its signatures, defined in the layers beneath ``api``.

Jobs stand on ``api`` (``tests/test_layers.py``): they call what this layer offers and name the types of what it
returns, and the vocabulary of locations, from here. Each name is the lower layer's object itself, not a copy:
``interp.api.objects.Location is interp.hooks.locations.Location``.
"""

from interp.backends.base import PairRunner, Runner, SiteGradients
from interp.engine.batched import PRECISIONS
from interp.engine.interventions import Interchange, Intervention
from interp.engine.interventions import kinds as intervention_kinds
from interp.hooks.locations import ATTN_OUT, MLP_OUT, RESID_MID, Z, Location, all_locations, component_locations, parse_locations
from interp.hooks.inputs import parse_model_locations
from interp.hooks.templates import reading_aliases, reading_roles
from interp.models.labels import canonical_label
from interp.tasks import Task, TaskGroup
from interp.tasks.base import WordPairs
from interp.tasks.stages import BehavioralStage

__all__ = ["ATTN_OUT", "BehavioralStage", "Interchange", "Intervention", "Location", "MLP_OUT", "PRECISIONS", "PairRunner", "RESID_MID", "Runner",
           "SiteGradients", "Task", "TaskGroup", "WordPairs", "Z", "all_locations", "canonical_label", "component_locations", "intervention_kinds", "parse_locations",
           "parse_model_locations", "reading_aliases", "reading_roles"]
