"""The objects a job holds, passes on and names in its signatures, defined in the layers beneath ``api``.

Jobs stand on ``api`` (``tests/test_layers.py``): they call what this layer offers and name the types of what it
returns from here. Each name is the lower layer's object itself, not a copy: ``interp.api.objects.Location is
interp.hooks.locations.Location``.
"""

from interp.hooks.locations import Location
from interp.tasks import Task

__all__ = ["Location", "Task"]
