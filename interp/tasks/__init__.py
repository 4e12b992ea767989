"""Tasks: one folder per dataset with its loader, token roles and causal model (``monli``, ``mqnli``), plugged in through one :class:`Task`."""

from interp.tasks.base import Task, VariableValues, WordPairs, value_name
from interp.tasks.registry import TASK_GROUPS, TaskGroup, resolve_task, resolve_tasks, task_for_file

__all__ = ["Task", "VariableValues", "WordPairs", "TASK_GROUPS", "TaskGroup", "resolve_task", "resolve_tasks", "task_for_file", "value_name"]
