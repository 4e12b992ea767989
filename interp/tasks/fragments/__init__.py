"""The eight semantic fragments (Richardson, Hu, Moss & Sabharwal 2020) as behavioral tasks: ``--task fragment:NAME``."""

from interp.core.lazy import lazy_exports

_EXPORTS = {
    "FRAGMENTS": "interp.tasks.fragments.data",
    "LABELS": "interp.tasks.fragments.data",
    "FragmentPair": "interp.tasks.fragments.data",
    "load_fragment": "interp.tasks.fragments.data",
    "fragment_task": "interp.tasks.fragments.task",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
