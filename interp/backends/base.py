"""The runner protocol: every way ``interp`` runs a model, provided by one object per backend and model kind; the lookup by name.

A runner (:func:`interp.backends.get_runner`) is what :class:`~interp.api.intervenable.IntervenableModel` asks whenever a model has to run: it never
imports the engine or a hook itself. A new family is a new runner (and a row of :mod:`interp.hooks.architecture`),
not an edit of the face. The whole protocol is implemented by the Hugging Face model through :mod:`interp.engine`, one
runner per kind (:class:`~interp.backends.hf.EncoderRunner`, which may compile, and
:class:`~interp.backends.hf.DecoderRunner`, which reuses each base's prefix), and by :class:`~interp.backends.tl_bridge.BridgeRunner` (the same
through a TransformerLens ``TransformerBridge``); each names its one-pass-per-pair reference
(:meth:`Runner.reference`), which the tests hold its fast paths to.

Shapes: ``n`` examples, ``width`` = tokens × d_model at a location (× d_head at one head's ``attn.hook_z``),
``labels`` the classifier's own labels. Vectors are float32 on the model's device, logits float32 on CPU unless said.
"""

from __future__ import annotations

import importlib.util
from contextlib import AbstractContextManager
from typing import Callable, Protocol, Sequence

from jaxtyping import Float, Int
from torch import Tensor

from interp.core.errors import ConfigError, named
from interp.engine.compiled import CompileStats
from interp.engine.gradients import SiteGradients
from interp.engine.interventions import Intervention
from interp.engine.paths import path_patch_logits
from interp.engine.plan import HELD, Intervened, Sources, WritePlan  # noqa: F401 (the plan a runner takes, read from here)
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location

#: Names ``--backend`` takes.
BACKENDS = ("hf", "transformer-lens")


class PairRunner(Protocol):
    """Any intervention on chosen (base, source) pairs of one example set at one location; the gradient path DAS and
    interchange intervention training go through (:class:`~interp.engine.pair_suffix.PairSuffix`,
    :class:`~interp.engine.hooked_pairs.HookedPairs`).

    Attributes:
        vectors: float32 ``[n, width]``, each example's vector at the location.
        width: the location's width.
        lengths: int64 ``[n]``, each example's token count (training batches bases of similar length together).
    """

    vectors: Tensor
    width: int
    lengths: Tensor

    def __len__(self) -> int: ...

    def logits(self, bases: Int[Tensor, "pairs"], sources: Int[Tensor, "pairs"], intervention: Intervention,
               batch_size: int | None = None) -> Float[Tensor, "pairs labels"]:  # fmt: skip
        """The model's logits (on its device) on each base with ``intervention(base vector, source vector)`` written at
        the location; differentiable in the intervention's parameters where gradients are enabled."""
        ...

    def written_logits(self, bases: Int[Tensor, "rows"], vectors: Float[Tensor, "rows width"],
                       batch_size: int | None = None) -> Float[Tensor, "rows labels"]:  # fmt: skip
        """The model's logits (on its device) on each base with ``vectors[i]`` written at the location, no gradients."""
        ...

    def path_patch_logits(self, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int, *,
                          receiver: Location | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
        """Path patching through :meth:`plan_logits` (:func:`interp.engine.paths.path_patch_logits`): each base with the
        vector at ``sender`` replaced by each source's and every later component held at its base value (with a
        ``receiver``, only that head input then written), float32 ``[bases, sources, labels]`` on CPU."""
        ...

    def frozen(self) -> AbstractContextManager:
        """A block in which the model's weights get no gradient (restored after): training trains the intervention only."""
        ...


class Runner(Protocol):
    """Every way of running one model: its own predictions, vectors at locations, interchange with a vector or with any
    intervention (through :meth:`pairs`), the gradient path, activation gradients, a precision and the reference."""

    name: str
    #: Whether :meth:`gradients` takes AtP*'s ``qk_fix`` and ``graddrop`` (the screen's default where it does).
    atp_star: bool
    #: What compiling did over the runner's calls (:class:`~interp.engine.compiled.CompileStats`: shapes, their first
    #: calls' seconds, pairs compiled and run eagerly); ``None`` for a runner that never compiles.
    compile_stats: CompileStats | None

    def predict(self, encoded: Sequence[Encoded]) -> Float[Tensor, "n labels"]:
        """The classifier's logits on each example, no intervention: float32 ``[n, labels]`` on CPU."""
        ...

    def read(self, encoded: Sequence[Encoded], locations: Sequence[Location]) -> dict[Location, Tensor]:
        """One forward pass of the examples as one padded batch; each location's float32 ``[n, width]`` on CPU."""
        ...

    def vectors(self, encoded: Sequence[Encoded], location: Location) -> Float[Tensor, "n width"]:
        """Each example's vector at ``location`` (unpadded batches: each equals a batch-1 pass's)."""
        ...

    def vectors_and_logits(self, encoded: Sequence[Encoded], location: Location) -> tuple[Tensor, Tensor]:
        """:meth:`vectors` and :meth:`predict` from the same forward passes."""
        ...

    def interchange_logits(self, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], location: Location, *,
                           batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
        """Every base with its vector at ``location`` replaced by each source's: float32 ``[bases, sources, labels]``
        on CPU; ``on_rows(k)`` told after every k pairs."""
        ...

    def plan_logits(self, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], plan: WritePlan, *, batch_size: int | None = None,
                    on_rows: Callable[[int], None] | None = None,
                    read: Sequence[Location] = ()) -> tuple[Float[Tensor, "rows labels"], dict[Location, Tensor]]:  # fmt: skip
        """Each row's logits with the base ``encoded[base_rows[r]]`` run under ``plan`` (a :class:`WritePlan`: at each of
        its locations a source's vector, an intervention of the base's and a source's, or the base's own value held),
        float32 ``[rows, labels]`` on CPU (with gradients where enabled: on the model's device, in the graph); and each
        location of ``read``'s vectors on that pass, float32 ``[rows, width]`` on CPU. Joint interventions, joint DAS
        and path patching run through it."""
        ...

    def pairs(self, encoded: Sequence[Encoded], location: Location) -> PairRunner:
        """The :class:`PairRunner` of the examples at a residual-stream location."""
        ...

    def frozen(self) -> AbstractContextManager:
        """A block in which the model's weights get no gradient (restored after): joint DAS trains its interventions only."""
        ...

    def gradients(self, encoded: Sequence[Encoded], locations: Sequence[Location], *, qk_fix: bool = False,
                  graddrop: bool = False, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
        """Each location's activations and the gradient of every label's logit with respect to them (one forward and
        one backward pass per label and batch, every location at once); with ``qk_fix`` and ``graddrop`` what AtP*'s
        two refinements need (:func:`interp.engine.gradients.site_gradients`); ``on_rows(k)`` after each batch of ``k``
        examples."""
        ...

    def precision(self, name: str) -> AbstractContextManager:
        """A block in which the model runs in ``name`` (fp32, tf32, bf16); the weights are restored exactly after."""
        ...

    def reference(self) -> "Runner":
        """The one-pass-per-pair reference of this runner: nothing shared between examples or pairs."""
        ...


class PlanCalls:
    """What a runner derives from its :meth:`Runner.plan_logits`, written once for every runner: path patching."""

    def path_patch_logits(self, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int, *,
                          receiver: Location | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
        """:meth:`Runner.path_patch_logits` over this runner's write-plan passes (:func:`interp.engine.paths.path_patch_logits`)."""
        return path_patch_logits(self.plan_logits, bases, sources, sender, n_layers, receiver=receiver)


def check_backend_name(name: str) -> str:
    """``name`` if it is one of :data:`BACKENDS` and, for ``transformer-lens``, the package is installed.

    Raises:
        ConfigError: naming ``backend=``: an unknown backend, or transformer-lens not installed.
    """
    if name not in BACKENDS:
        raise ConfigError(f"{named('backend')} must be one of {', '.join(BACKENDS)}, got {name!r}")
    if name == "transformer-lens" and importlib.util.find_spec("transformer_lens") is None:
        raise ConfigError(f"{named('backend', 'transformer-lens')}: the transformer-lens package is not installed; pip install 'interp[tl]'")
    return name
