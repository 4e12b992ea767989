"""The TransformerLens backend: a BERT or RoBERTa classifier behind a ``TransformerBridge``, read and patched through its hook points.

TransformerLens 4.x wraps Hugging Face models in a ``TransformerBridge``
(the old ``HookedEncoder`` is gone); of the encoder families interp runs,
its bridge has adapters for BERT and RoBERTa, as masked LMs only.
:data:`ADAPTERS` covers their sequence classifiers: TransformerLens's own
adapter with the masked-LM head and its LayerNorm dropped and ``unembed``
mapped to the classifier; :func:`register_adapter` registers one in the
adapter factory and in ``SUPPORTED_ARCHITECTURES`` (both are consulted when
a bridge boots). They are written to be upstreamable as they stand. Other
families (ELECTRA, DistilBERT, DeBERTa-v2, ModernBERT) are refused in one
line naming the default backend, which runs them all.

Each site of :mod:`interp.hooks.locations` is read at the bridge hook the
table there names (:func:`bridge_hook`): ``blocks.{l}.hook_out``,
``blocks.{l}.attn.hook_z`` (``[batch, seq, heads, d_head]``; a head is one
slice), ``blocks.{l}.attn.o.hook_out``, ``blocks.{l}.ln1.hook_in``,
``blocks.{l}.mlp.out.hook_out``. An interchange intervention, with a vector
or with any intervention module (:class:`~interp.engine.hooked_pairs.HookedPairs`,
with gradients for DAS), is one ``run_with_hooks`` pass per (base, source)
pair, rows batched: the TransformerLens way, with no prefix shared. The tests
run every public call of :class:`~interp.api.intervenable.IntervenableModel`
through both runners and compare.

Usage::

    runner = BridgeRunner(model, tokenizer)            # wraps a copy; ``model`` is not touched
    runner.bridge.hook_dict["blocks.0.attn.hook_z"]    # TransformerLens's own hook point
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor
from transformer_lens.factories import architecture_adapter_factory as factory
from transformer_lens.model_bridge import TransformerBridge
from transformer_lens.model_bridge.generalized_components import UnembeddingBridge
from transformer_lens.model_bridge.supported_architectures.bert import BertArchitectureAdapter
from transformer_lens.model_bridge.supported_architectures.roberta import RobertaArchitectureAdapter

from interp.backends.base import PlanCalls, SiteGradients
from interp.core.errors import ConfigError, named
from interp.engine.rows import grouped_passes, length_groups
from interp.engine.gradients import Probes, empty_gradients, fill
from interp.engine.hooked_pairs import HookedPairs
from interp.engine.plan import WritePlan, positions
from interp.models.freezing import frozen_weights
from interp.hooks.locations import ATTN_OUT, INPUTS, MLP_OUT, RESID_MID, Z, Location
from interp.hooks.encoding import Encoded, collate, location_tokens


def _classifier_adapter(base: type, classifier: str) -> type:
    """``base`` (a TransformerLens encoder adapter) for its ``*ForSequenceClassification``: no MLM head, ``unembed`` is the classifier.

    The pooler, where the family has one, stays a component (as the BERT
    adapter's ``prepare_model`` adds it); ``unembed`` wraps the
    classification layer ``classifier``, so the bridge's output is the classifier's logits.
    """

    def __init__(self, cfg) -> None:
        base.__init__(self, cfg)
        for name in ("mlm_head", "ln_final"):
            self.component_mapping.pop(name, None)
        self.component_mapping["unembed"] = UnembeddingBridge(name=classifier)

    return type(base.__name__.replace("Architecture", "Classifier"), (base,), {"__init__": __init__, "__doc__": _classifier_adapter.__doc__})


#: The classifiers the bridge runs: TransformerLens's BERT and RoBERTa adapters with their classification heads.
ADAPTERS = {
    "BertForSequenceClassification": _classifier_adapter(BertArchitectureAdapter, "classifier"),
    "RobertaForSequenceClassification": _classifier_adapter(RobertaArchitectureAdapter, "classifier.out_proj"),
}


def register_adapter(architecture: str = "BertForSequenceClassification") -> None:
    """Register the classifier adapter of ``architecture`` (a key of :data:`ADAPTERS`) in TransformerLens's factory (idempotent)."""
    factory.SUPPORTED_ARCHITECTURES[architecture] = ADAPTERS[architecture]
    factory.ArchitectureAdapterFactory.register_adapter(architecture, ADAPTERS[architecture])


def wrap(model, tokenizer) -> TransformerBridge:
    """A ``TransformerBridge`` over a copy of ``model`` (a class of :data:`ADAPTERS`), on its device, in eval mode.

    The copy is what the bridge switches to eager attention; ``model`` is
    left as it is. Nothing is downloaded: the weights and the tokenizer are the ones given.

    Raises:
        ConfigError: TransformerLens has no adapter for ``model``'s class (naming the alternatives).
    """
    architecture = type(getattr(model, "inner", model)).__name__  # a decoder read at its last token: the model it wraps
    if architecture not in ADAPTERS or model is not getattr(model, "inner", model):
        raise ConfigError(f"`backend=transformer-lens`: TransformerLens's bridge has no adapter for {architecture} (it has "
                          f"{' and '.join(ADAPTERS)}); the default backend `hf` runs every family interp supports")  # fmt: skip
    register_adapter(architecture)
    device = next(model.parameters()).device
    bridge = TransformerBridge.boot_transformers(
        "interp-local-model",
        hf_model=copy.deepcopy(model).eval(),
        tokenizer=copy.deepcopy(tokenizer),
        device=str(device),
        hf_config_overrides={"architectures": [architecture]},
    )
    return bridge.eval()


def bridge_hook(location: Location) -> str:
    """The bridge's hook name for ``location``'s site (a head is a slice of ``attn.hook_z``'s head axis).

    >>> bridge_hook(Location.parse("blocks.2.hook_resid_mid@w_h")), bridge_hook(Location.parse("blocks.0.hook_resid_pre@cls"))
    ('blocks.2.ln1.hook_in', 'blocks.0.hook_in')
    """
    l = location.layer
    if location.is_residual:
        return "blocks.0.hook_in" if location.hidden_index == 0 else f"blocks.{l}.hook_out"
    return {
        Z: f"blocks.{l}.attn.hook_z",
        ATTN_OUT: f"blocks.{l}.attn.o.hook_out",
        RESID_MID: f"blocks.{l}.ln1.hook_in",
        MLP_OUT: f"blocks.{l}.mlp.out.hook_out",
    }[location.component]


def _view(location: Location, activation: Tensor) -> Tensor:
    """The hook's tensor as ``[batch, seq, width]`` (a view): one head of ``hook_z``'s ``[batch, seq, heads, d_head]``, or its heads flattened."""
    if location.component == Z:
        return activation[:, :, location.head] if location.head >= 0 else activation.flatten(2)
    return activation


class BridgeRunner(PlanCalls):
    """The :class:`~interp.backends.base.Runner` of a classifier behind a TransformerBridge (see the module docstring).

    Args:
        model: a Hugging Face ``BertForSequenceClassification`` or ``RobertaForSequenceClassification`` (a copy is wrapped).
        tokenizer: its tokenizer.

    Raises:
        ConfigError: naming ``backend=``: a model the adapter does not cover, or no tokenizer.
    """

    name = "transformer-lens"
    atp_star = False
    compile_stats = None  # it never compiles

    def __init__(self, model, tokenizer) -> None:
        if tokenizer is None:
            raise ConfigError(f"{named('backend', 'transformer-lens')} needs the model's tokenizer")
        self.config = model.config
        self.bridge = wrap(model, tokenizer)
        self.device = next(model.parameters()).device
        self.pad_token_id = getattr(tokenizer, "pad_token_id", None) or 0

    def _check(self, location: Location) -> None:
        if location.component in INPUTS:
            raise ConfigError(f"location {location}: a head's query, key or value input has no hook on the transformer-lens bridge here; "
                              f"path patching to a receiver runs with {named('backend', 'hf')}")  # fmt: skip
        heads = self.config.num_attention_heads
        if location.head >= heads:
            raise ConfigError(f"location {location}: head {location.head} is out of range for a model with {heads} heads (0..{heads - 1})")
        if bridge_hook(location) not in self.bridge.hook_dict:
            raise ConfigError(f"location {location}: the bridge has no hook {bridge_hook(location)}")

    def _forward(self, ids: Tensor, types: Tensor, mask: Tensor | None = None, hooks=()) -> Tensor:
        mask = torch.ones_like(ids) if mask is None else mask
        return self.bridge.run_with_hooks(ids, token_type_ids=types, attention_mask=mask, fwd_hooks=list(hooks))

    def _ids(self, encoded: Sequence[Encoded], indices) -> tuple[Tensor, Tensor]:
        ids = torch.tensor([encoded[i].input_ids for i in indices], dtype=torch.long, device=self.device)
        types = torch.tensor([encoded[i].token_type_ids for i in indices], dtype=torch.long, device=self.device)
        return ids, types

    @torch.no_grad()
    def predict(self, encoded: Sequence[Encoded]) -> Tensor:
        """float32 ``[n, labels]`` on CPU, unpadded batches of one length (a pass out of memory is halved)."""
        out = torch.empty(len(encoded), self.config.num_labels)

        def run(chunk: list[int]) -> None:
            out[torch.tensor(chunk)] = self._forward(*self._ids(encoded, chunk)).float().cpu()

        grouped_passes(encoded, 64, run, device=self.device)
        return out

    @torch.no_grad()
    def read(self, encoded: Sequence[Encoded], locations: Sequence[Location]) -> dict[Location, Tensor]:
        """Each location's float32 ``[n, tokens × width]`` (CPU) from one ``run_with_cache`` pass of a padded batch."""
        batch = collate(encoded, self.pad_token_id)
        return {loc: v.float().cpu() for loc, v in self._read(batch, batch["positions"], locations)[0].items()}

    def _read(self, batch: dict, positions, locations: Sequence[Location]) -> tuple[dict[Location, Tensor], Tensor]:
        for loc in locations:
            self._check(loc)
        names = {bridge_hook(loc) for loc in locations}
        logits, cache = self.bridge.run_with_cache(
            batch["input_ids"].to(self.device), token_type_ids=batch["token_type_ids"].to(self.device),
            attention_mask=batch["attention_mask"].to(self.device), names_filter=lambda name: name in names,
        )  # fmt: skip
        out = {}
        for loc in locations:
            columns = torch.cat([positions[r].reshape(len(positions[r]), -1) for r in loc.roles], dim=1).to(self.device)
            view = _view(loc, cache[bridge_hook(loc)])
            out[loc] = view[torch.arange(len(columns), device=self.device)[:, None], columns].reshape(len(columns), -1)
        return out, logits

    @torch.no_grad()
    def vectors_and_logits(self, encoded: Sequence[Encoded], location: Location, batch_size: int = 64) -> tuple[Tensor, Tensor]:
        """float32 ``[n, tokens × width]`` on the device and ``[n, labels]`` on CPU, through ``run_with_cache`` on unpadded
        batches of equal length."""
        self._check(location)
        tokens = location_tokens(encoded, location.roles, f"location {location}")
        width = len(tokens[0]) * location.token_width(self.config) if tokens else 0
        out = torch.empty(len(encoded), width, dtype=torch.float32, device=self.device)
        logits = torch.empty(len(encoded), self.config.num_labels)
        at = Location(location.hidden_index, "at", location.component, location.head)

        def run(chunk: list[int]) -> None:
            ids, types = self._ids(encoded, chunk)
            batch = {"input_ids": ids, "token_type_ids": types, "attention_mask": torch.ones_like(ids)}
            vectors, found = self._read(batch, {"at": torch.tensor([tokens[i] for i in chunk], device=self.device)}, [at])
            out[torch.tensor(chunk, device=self.device)] = vectors[at].float()
            logits[torch.tensor(chunk)] = found.float().cpu()

        grouped_passes(encoded, batch_size, run, device=self.device)  # a pass out of memory is halved
        return out, logits

    def vectors(self, encoded: Sequence[Encoded], location: Location) -> Tensor:
        return self.vectors_and_logits(encoded, location)[0]

    def _patch(self, location: Location, columns: Tensor, write: Callable[[Tensor], Tensor]):
        """A TransformerLens hook writing ``write(old)`` (``[rows, tokens × width]``) at ``columns`` of ``location``'s site."""

        def patch(activation, hook):
            activation = activation.clone()
            view = _view(location, activation)
            rows = torch.arange(len(columns), device=activation.device)[:, None]
            old = view[rows, columns]
            view[rows, columns] = write(old.reshape(len(columns), -1)).to(activation.dtype).view(old.shape)
            return activation

        return bridge_hook(location), patch

    def _rows(self, location: Location):
        """:data:`~interp.engine.hooked_pairs.RunRows` through the bridge."""

        def run(ids: Tensor, types: Tensor, where: Tensor, write: Callable[[Tensor], Tensor]) -> Tensor:
            return self._forward(ids, types, hooks=[self._patch(location, where, write)])

        return run

    @torch.no_grad()
    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *,
                           batch_size: int | None = None, on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        """float32 ``[len(bases), n_sources, n_labels]``: one ``run_with_hooks`` forward per pair, ``batch_size`` pairs per pass (default 64).

        The hook at :func:`bridge_hook` writes each pair's source vectors at its base's tokens of ``location``.

        Raises:
            ConfigError: a base lacks a role of the location, the sources' width is wrong, or a head is out of range.
        """
        self._check(location)
        tokens = location_tokens(bases, location.roles, f"location {location}")
        n_tokens = len(tokens[0]) if tokens else 0
        width = location.token_width(self.config)
        if sources.dim() != 2 or sources.shape[1] != n_tokens * width:
            raise ConfigError(f"location {location}: sources must be [n_sources, tokens × width = {n_tokens} × {width}], got {tuple(sources.shape)}")
        sources = sources.to(self.device, torch.float32)
        n_sources, size = sources.shape[0], batch_size or 64
        out = torch.empty(len(bases), n_sources, self.config.num_labels, dtype=torch.float32)
        run = self._rows(location)
        for group in length_groups(bases):
            pairs = [(b, s) for b in group for s in range(n_sources)]
            for k in range(0, len(pairs), size):
                chunk = pairs[k : k + size]
                b = [p[0] for p in chunk]
                s = torch.tensor([p[1] for p in chunk], device=self.device)
                where = torch.tensor([tokens[i] for i in b], device=self.device)
                logits = run(*self._ids(bases, b), where, lambda old, s=s: sources[s])
                out[torch.tensor(b), s.cpu()] = logits.float().cpu()
                if on_rows is not None:
                    on_rows(len(chunk))
        return out

    def plan_logits(self, encoded: Sequence[Encoded], base_rows: Tensor, plan: WritePlan, *, batch_size: int | None = None,
                    on_rows: Callable[[int], None] | None = None, read: Sequence[Location] = ()) -> tuple[Tensor, dict[Location, Tensor]]:  # fmt: skip
        """Each row one ``run_with_hooks`` pass of the whole bridge, rows of one length batched (``batch_size``, default
        64): at each location's bridge hook its write (a source's vector, an intervention's output, or the base's own
        value, read first through ``run_with_cache`` on the row's base); ``read`` recorded by hooks after the writes.

        Raises:
            ConfigError: a location the bridge has no hook for (a head's query, key or value input), a head out of range.
        """
        for loc in [*plan.writes, *read]:
            self._check(loc)
        size, grad = batch_size or 64, torch.is_grad_enabled()
        out = torch.empty(len(base_rows), self.config.num_labels)
        kept, found = [], {}
        for group in length_groups([encoded[int(b)] for b in base_rows.tolist()]):
            index = torch.tensor(group)
            distinct, of_row = torch.unique(base_rows[index], return_inverse=True)
            held: dict[Location, list[Tensor]] = {loc: [] for loc in plan.held}
            for k in range(0, len(distinct) if plan.held else 0, size):
                batch = collate([encoded[int(b)] for b in distinct[k : k + size]], self.pad_token_id)
                with torch.no_grad():
                    vectors, _ = self._read(batch, positions(batch, len(batch["input_ids"])), plan.held)
                for loc in plan.held:
                    held[loc].append(vectors[loc])
            values = {loc: torch.cat(parts) for loc, parts in held.items()}
            for k in range(0, len(group), size):
                rows, bases = index[k : k + size], of_row[k : k + size]
                batch = collate([encoded[int(base_rows[r])] for r in rows], self.pad_token_id)
                where = positions(batch, len(rows))
                columns = {loc: torch.cat([where[r].reshape(len(rows), -1) for r in loc.roles], 1).to(self.device) for loc in [*plan.writes, *read]}
                writes = plan.row_writes(rows, {loc: v[bases.to(v.device)] for loc, v in values.items()}, self.device)
                hooks = [self._patch(loc, columns[loc], w if callable(w) else (lambda old, w=w: w)) for loc, w in writes.items()]
                seen: dict[Location, Tensor] = {}
                hooks += [self._peek(loc, columns[loc], seen) for loc in read]
                logits = self._forward(batch["input_ids"].to(self.device), batch["token_type_ids"].to(self.device), hooks=hooks)
                if grad:
                    kept.append((rows, logits))
                else:
                    out[rows] = logits.float().cpu()
                for loc in read:
                    found.setdefault(loc, torch.empty(len(base_rows), seen[loc].shape[1]))[rows] = seen[loc].float().cpu()
                if on_rows is not None:
                    on_rows(len(rows))
        if grad and kept:
            order = torch.argsort(torch.cat([rows for rows, _ in kept]))
            out = torch.cat([logits for _, logits in kept])[order.to(self.device)]
        return out, found

    def _peek(self, location: Location, columns: Tensor, seen: dict):
        """A TransformerLens hook recording ``location``'s vectors at ``columns`` in ``seen`` (the activation unchanged)."""

        def peek(activation, hook):
            view = _view(location, activation)
            seen[location] = view[torch.arange(len(columns), device=activation.device)[:, None], columns].reshape(len(columns), -1).detach()

        return bridge_hook(location), peek

    def frozen(self):
        """The weights get no gradient within the block (restored after)."""
        return frozen_weights(self.bridge)

    def pairs(self, encoded: Sequence[Encoded], location: Location) -> HookedPairs:
        """Each pair's ``run_with_hooks`` pass, pairs batched; with gradients where enabled (DAS through the bridge)."""
        self._check(location)
        return HookedPairs(self._rows(location), self.bridge, encoded, location, self.vectors(encoded, location))

    def gradients(self, encoded: Sequence[Encoded], locations: Sequence[Location], *, qk_fix: bool = False, graddrop: bool = False,
                  batch_size: int = 64, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
        """A zero tensor that requires a gradient added at each location's tokens of its bridge hook
        (:class:`~interp.engine.gradients.Probes`, as the Hugging Face runner adds them with PyTorch hooks); one backward
        pass per label.

        Raises:
            ConfigError: naming ``qk_fix=`` or ``graddrop=``: AtP*'s refinements run on the hf backend only.
        """
        for name, on in (("qk_fix", qk_fix), ("graddrop", graddrop)):
            if on:
                raise ConfigError(f"{named(name, True)} runs on the hf backend only; screen through it, or with {name}=False")
        for loc in locations:
            self._check(loc)
        out = empty_gradients(encoded, locations, self.config)
        def run(chunk: list[int]) -> None:
            probes = Probes()
            hooks = [self._patch(loc, torch.tensor([location_tokens([encoded[i]], loc.roles, "")[0] for i in chunk], device=self.device),
                                 probes.at(loc)) for loc in locations]  # fmt: skip
            fill(out, torch.tensor(chunk), probes.gradients(self._forward(*self._ids(encoded, chunk), hooks=hooks), locations))

        with frozen_weights(self.bridge), torch.enable_grad():
            grouped_passes(encoded, batch_size, run, device=self.device, on_rows=on_rows)  # a pass out of memory is halved
        return {loc: SiteGradients(*v) for loc, v in out.items()}

    @contextmanager
    def precision(self, name: str) -> Iterator[None]:
        """The bridge runs in fp32 only.

        Raises:
            ConfigError: naming ``precision=``: anything but fp32.
        """
        if name != "fp32":
            raise ConfigError(f"{named('precision', name)} runs on the hf backend only; {named('backend', self.name)} runs fp32")
        yield

    def reference(self) -> "BridgeRunner":
        """Itself: each pair is already its own pass, nothing shared."""
        return self
