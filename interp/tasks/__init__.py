"""Tasks: one folder per dataset with its loader, token roles and causal model (``monli``, ``mqnli``), plugged in through one :class:`Task`.

The names below are imported on first use (:mod:`interp.core.lazy`): a light module of a task (a fragment's
names, :mod:`interp.tasks.fragments.data`) imports without torch.
"""

from interp.core.lazy import lazy_exports

_EXPORTS = {
    "Task": "interp.tasks.base",
    "VariableValues": "interp.tasks.base",
    "WordPairs": "interp.tasks.base",
    "Groups": "interp.tasks.base",
    "value_name": "interp.tasks.base",
    "TASK_GROUPS": "interp.tasks.registry",
    "TaskGroup": "interp.tasks.registry",
    "resolve_task": "interp.tasks.registry",
    "resolve_tasks": "interp.tasks.registry",
    "task_for_file": "interp.tasks.registry",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
