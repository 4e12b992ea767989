"""The settings every job shares, in three groups: which data (:class:`DataSpec`), which examples of it (:class:`SampleSpec`),
and how to run the model (:class:`RunSpec`).

A job's config holds these three objects and its own settings, instead of
repeating the same dozen fields; the CLI's option groups (``--task`` ...,
``--splits`` ..., ``--batch-size`` ...) build them, and a notebook builds
them the same way::

    >>> from interp.api.specs import DataSpec, SampleSpec, RunSpec
    >>> SampleSpec(splits=["nmonli_test"], max_per_split=50)
    SampleSpec(splits=('nmonli_test',), max_examples=None, max_per_split=50, seed=0)
    >>> RunSpec(batch_size=0)
    Traceback (most recent call last):
    ...
    interp.core.errors.ConfigError: batch_size= must be at least 1, got 0

A task is resolved once, at the job's entry (:meth:`DataSpec.load`), and the
``Task`` travels down from there; ``DataSpec(task=my_task)`` takes one built
in a notebook. :meth:`flat` gives the groups' fields as one mapping under
the names the files have always recorded (a config's fingerprint and its
``metrics.json`` stay what they were).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Sequence

from interp.backends.base import check_backend_name
from interp.core.checks import check_bool
from interp.core.errors import ConfigError, named, renamed
from interp.hooks.encoding import check_wordpiece_rule
from interp.tasks import Task, task_for_file
from interp.api.loading import Classifier, load_task


#: A decoder's reading (:mod:`interp.hooks.templates`): recorded only where set, so an encoder run's record is as it was.
READING = ("template", "label_words")
#: Settings recorded only where set (not ``None``): a decoder's reading, and whether the suffix was compiled (which moves
#: nothing but float rounding), so a record made without them is as it was.
RECORDED_WHEN_SET = (*READING, "compile", "prefix_reuse")


def flat(config) -> dict:
    """``config``'s fields (a dataclass) as one JSON-ready dict: a spec's fields inline under their own names, a task or a
    model held in memory by its name: what files record of a config (the names they had before specs existed). A
    spec's field whose name the config already holds is recorded as ``<spec>_<name>`` (a training's ``sample_seed``
    beside its own ``seed``); :data:`RECORDED_WHEN_SET` only where set."""
    out, own = {}, {f.name for f in fields(config)}
    for f in fields(config):
        value = getattr(config, f.name)
        if f.name in RECORDED_WHEN_SET and value is None:
            continue
        if isinstance(value, (DataSpec, SampleSpec, RunSpec)):
            for key, inner in flat(value).items():
                out[f"{f.name}_{key}" if key in out or key in own else key] = inner
        elif isinstance(value, (Task, Classifier)):
            out[f.name] = value.name
        else:
            out[f.name] = value
    return out


@dataclass(frozen=True)
class DataSpec:
    """Which task, and where its data lie.

    Args:
        task: a task name (``monli``, ``mqnli``, ``fragment:NAME``, ...), a user's
            ``file.py:function``, or a :class:`~interp.tasks.base.Task` built in memory.
        data_file: the generated file a file task reads; with the default ``monli``, a
            file that is not MoNLI's is read as MQNLI (:func:`interp.tasks.task_for_file`).
        data_dir: where the released files lie (else ``$INTERP_MONLI_DIR`` / ``$INTERP_FRAGMENTS_DIR``).
        verify_checksums: compare the released files' SHA-256 with the published sums.
    """

    task: str | Task = "monli"
    data_file: str | None = None
    data_dir: str | None = None
    verify_checksums: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.task, (str, Task)):
            raise ConfigError(f"`task=`: give a task name, a 'file.py:function', or a Task, not a {type(self.task).__name__}")

    @property
    def name(self) -> str:
        """The task's spec as given, or an in-memory task's name (what files record)."""
        return self.task.name if isinstance(self.task, Task) else self.task

    def load(self, *, variables: Sequence[str] = (), splits: Sequence[str] = ()) -> Task:
        """The task, with ``variables`` and ``splits`` checked against it.

        Raises:
            ConfigError: naming ``task=`` (as :func:`interp.api.loading.load_task`), ``variables=`` or ``splits=``.
            DataError: the task's data are missing or spoiled.
        """
        spec = self.task if isinstance(self.task, Task) else task_for_file(self.task, self.data_file)
        task = load_task(spec, data_dir=self.data_dir, data_file=self.data_file, verify_checksums=self.verify_checksums)
        with renamed(variable="variables"):
            for variable in variables:
                task.check_variable(variable)
        known = (*task.splits, *task.extra_splits)
        unknown = [s for s in splits if s not in known]
        if unknown:
            raise ConfigError(f"{named('splits', repr(unknown[0]))}: unknown split; task {task.name!r} has {', '.join(known)}")
        return task


@dataclass(frozen=True)
class SampleSpec:
    """Which examples of a task: the named splits (``()``: the task's default set), at most ``max_per_split`` of
    each, then at most ``max_examples`` in all, both drawn with ``seed`` (:meth:`interp.tasks.base.Task.examples`).

    Raises:
        ConfigError: naming ``max_examples=`` or ``max_per_split=`` below 1, or ``splits=`` not a list of names.
    """

    splits: tuple[str, ...] = ()
    max_examples: int | None = None
    max_per_split: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.splits, str) or not all(isinstance(s, str) for s in self.splits):
            raise ConfigError(f"`splits=` must be a sequence of split names, got {self.splits!r}")
        object.__setattr__(self, "splits", tuple(self.splits))
        for name in ("max_examples", "max_per_split"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"`{name}=` must be at least 1, got {value}")

    def draw(self, task: Task) -> list:
        """The examples this names, in file order.

        Raises:
            ConfigError: naming ``splits=``, a split ``task`` lacks.
            DataError: as :attr:`interp.tasks.base.Task.load`.
        """
        return task.examples(self.splits, n=self.max_examples, per_split=self.max_per_split, seed=self.seed)


@dataclass(frozen=True)
class RunSpec:
    """How to run the model.

    Args:
        device: ``auto`` (a GPU when there is one), ``cpu`` or ``cuda[:N]``.
        batch_size: examples (or (base, source) pairs) per forward pass; ``None``: the job's default.
        wordpiece: which WordPiece stands for a split word (``first``, ``last``; ``all`` where a job takes it).
        backend: ``hf`` (interp's engine on the Hugging Face model) or ``transformer-lens``.
        compile: the interchange's suffix through ``torch.compile`` (:mod:`interp.engine.compiled`); ``None``: on for
            CUDA in calls of at least 2^20 pairs, off on a CPU.
        prefix_reuse: on a decoder, run each base's positions before the intervened ones once for all its sources
            (:mod:`interp.engine.decoder`); ``False``: every position of every pair (the same logits within 1e-5, slower);
            ``None``: on. Encoders ignore it.

    Raises:
        ConfigError: naming the parameter that is out of range.
    """

    device: str = "auto"
    batch_size: int | None = None
    wordpiece: str = "first"
    backend: str = "hf"
    compile: bool | None = None
    prefix_reuse: bool | None = None

    def __post_init__(self) -> None:
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"`batch_size=` must be at least 1, got {self.batch_size}")
        if self.device not in ("auto", "cpu") and not self.device.startswith("cuda"):
            raise ConfigError(f"`device=` must be auto, cpu or cuda[:N], got {self.device!r}")
        check_wordpiece_rule(self.wordpiece)
        check_backend_name(self.backend)
        if self.compile not in (None, True, False):
            raise ConfigError(f"`compile=` must be True, False or None (the default: on for CUDA, off on a CPU), got {self.compile!r}")
        check_bool(self.prefix_reuse, "prefix_reuse", optional=True)
        if self.compile and self.backend != "hf":
            raise ConfigError(f"`compile=True` compiles the engine's suffix; `backend={self.backend}` runs eagerly")

    def batch(self, default: int) -> int:
        """:attr:`batch_size`, or the job's ``default`` when it is ``None``."""
        return self.batch_size if self.batch_size is not None else default

    def refuse_unused(self, job: str) -> None:
        """Refuse the settings ``job`` (one that runs the Hugging Face model itself, reading each word's first WordPiece
        where it reads one) does not take, rather than ignore them: ``backend`` other than ``hf``, ``wordpiece`` other
        than ``first``.

        Raises:
            ConfigError: naming ``backend=`` or ``wordpiece=``.
        """
        if self.backend != "hf":
            raise ConfigError(f"{named('backend', repr(self.backend))}: {job} runs the Hugging Face model itself; leave `backend=` hf")
        if self.wordpiece != "first":
            raise ConfigError(f"{named('wordpiece', repr(self.wordpiece))}: {job} reads each word's first WordPiece; leave `wordpiece=` first")
