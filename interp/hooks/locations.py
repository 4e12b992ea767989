"""Locations: where a vector lives, named as TransformerLens names it.

A location is one layer output read at one or several token roles::

    blocks.3.hook_resid_post@w_h            the output of block 3 (0-based), at w_h
    blocks.0.hook_resid_pre@cls             the embedding output, at [CLS]
    blocks.2.hook_resid_post@n_s.p+n_s.h    block 2's output at both subject nouns (MQNLI)

The vector at a location with several roles (or a role that covers several
WordPiece tokens, ``--wordpiece all``) is the concatenation of its tokens'
vectors, in the order the roles are named: ``tokens × d_model`` floats. An
interchange intervention there writes every one of the source's vectors into
the base at once.

The paper's BERT^r_t (Geiger, Richardson & Potts 2020, §6, r = 1..L the
layer, 0 the embeddings) is ``blocks.{r-1}.hook_resid_post@t`` for r >= 1 and
``blocks.0.hook_resid_pre@t`` for r = 0. In Hugging Face terms the vector is
``hidden_states[index]`` with ``index = l + 1`` for ``hook_resid_post`` of
block l and 0 for the embedding output.

Usage::

    loc = Location.parse("blocks.2.hook_resid_post@w_h")
    loc.layer, loc.roles, loc.hidden_index    # 2, ('w_h',), 3
    Location.parse("blocks.2.hook_resid_post@n_s.p+n_s.h").roles   # ('n_s.p', 'n_s.h')
    all_locations(6, ("cls", "w_p", "w_h"))   # 21 locations, embedding output first

Component sites
---------------
Inside block l of a post-norm BERT (Devlin et al. 2019, §3; Hugging Face's
``BertLayer``), with x the block's input (``hidden_states[l]``):

====================================  =================================================  ==============================
site                                  vector (per token)                                 TransformerBridge hook (TL 4.x)
====================================  =================================================  ==============================
``blocks.{l}.attn.hook_z``            the attention context, heads concatenated,         ``blocks.{l}.attn.hook_z``
                                      softmax(q kᵀ/√d_head) v (d_model wide)             (``[.., heads, d_head]``)
``blocks.{l}.attn.hook_z.h{H}``       head H's slice of it (d_head wide)                 ``blocks.{l}.attn.hook_z[:, :, H]``
``blocks.{l}.hook_attn_out``          z W_O + b_O, before residual and LayerNorm         ``blocks.{l}.attn.o.hook_out``
``blocks.{l}.hook_resid_mid``         x + attn_out, before the first LayerNorm           ``blocks.{l}.ln1.hook_in``
``blocks.{l}.hook_mlp_out``           the output dense's result, before residual and     ``blocks.{l}.mlp.out.hook_out``
                                      the second LayerNorm
``blocks.{l}.hook_resid_post``        the block's output (Hugging Face's layer output)   ``blocks.{l}.hook_out``
``blocks.0.hook_resid_pre``           the embedding output                               ``blocks.0.hook_in``
``blocks.{l}.attn.hook_q`` (``_k``,   a head's query (key, value) input: the projection  ``blocks.{l}.attn.hook_q``
``_v``; ``.h{H}`` one head)           of the block's input, before any rotary embedding
                                      or query/key norm; a key or value head of a
                                      grouped-query model is one of its key/value heads
====================================  =================================================  ==============================

The query, key and value inputs (:data:`INPUTS`) are receivers of path
patching (:mod:`interp.engine.paths`) only: a write there changes what other
tokens attend to, so no interchange, screen or sweep takes them
(:func:`parse_locations` refuses them).

Where names differ from TransformerLens: ``hook_resid_post`` here is the
Hugging Face layer output, which the bridge calls ``hook_out`` (with
``hook_resid_post`` as an alias) and the old HookedEncoder called
``hook_normalized_resid_post`` (its ``hook_resid_post`` is taken before the
second LayerNorm). The bridge's own ``hook_attn_out`` on BERT wraps
``BertAttention``, whose output already holds the residual and LayerNorm,
and its ``hook_resid_mid`` is ``ln1.hook_in`` (the module Hugging Face calls
``attention.output.LayerNorm``): compare by the hooks in the table.
``blocks.{l}.hook_out`` is accepted as another name of ``hook_resid_post``.

A component site of block l sorts with ``hidden_index = l + 1`` (the block
it belongs to): it is computed after ``hidden_states[l]`` and before
``hidden_states[l + 1]`` (:meth:`Location.parse` shows it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from interp.core.errors import ConfigError, named

RESID_PRE = "hook_resid_pre"
RESID_POST = "hook_resid_post"
Z = "attn.hook_z"
ATTN_OUT = "hook_attn_out"
RESID_MID = "hook_resid_mid"
MLP_OUT = "hook_mlp_out"
COMPONENTS = (Z, ATTN_OUT, RESID_MID, MLP_OUT)
Q, K, V = "attn.hook_q", "attn.hook_k", "attn.hook_v"
#: A head's query, key and value inputs: receivers of path patching, not interchange sites.
INPUTS = (Q, K, V)
_ROLE = r"[A-Za-z_][\w.]*"
_HOOK = r"hook_resid_pre|hook_resid_post|hook_out|hook_attn_out|hook_resid_mid|hook_mlp_out|attn\.hook_[zqkv](?:\.h\d+)?"
_PATTERN = re.compile(rf"blocks\.(\d+)\.({_HOOK})@({_ROLE}(?:\+{_ROLE})*)")


@dataclass(frozen=True, order=True)
class Location:
    """A hidden-state index (and component) and the token roles read there; ``str()`` gives the canonical name.

    ``hidden_index`` 0 is the embedding output, ``l + 1`` the output of block l.
    ``roles`` is one role name or a tuple of them (kept in the given order:
    the order of the concatenated vector); ``Location(3, "w_h")`` is
    ``Location(3, ("w_h",))``. ``component`` is ``""`` for the residual
    stream, else one of :data:`COMPONENTS` inside block ``hidden_index - 1``;
    ``head`` is a head of ``attn.hook_z`` (``-1``: all heads).

    Raises:
        ConfigError: a role that is not a name, a role named twice, no role, a negative index,
            an unknown component, a component at index 0, or a head without ``attn.hook_z``.
    """

    hidden_index: int
    roles: tuple[str, ...]
    component: str = ""
    head: int = -1

    def __post_init__(self) -> None:
        roles = (self.roles,) if isinstance(self.roles, str) else tuple(self.roles)
        object.__setattr__(self, "roles", roles)
        if not roles:
            raise ConfigError("a location needs at least one token role")
        for role in roles:
            if not isinstance(role, str) or not re.fullmatch(_ROLE, role):
                raise ConfigError(f"token role {role!r} in a location is not a name (letters, digits, _ and .)")
        if len(set(roles)) != len(roles):
            raise ConfigError(f"location at {'+'.join(roles)} names a token role twice")
        if self.hidden_index < 0:
            raise ConfigError(f"hidden-state index {self.hidden_index} is negative")
        if self.component and self.component not in (*COMPONENTS, *INPUTS):
            raise ConfigError(f"unknown component {self.component!r}; components are {', '.join((*COMPONENTS, *INPUTS))}")
        if self.component and self.hidden_index == 0:
            raise ConfigError(f"component {self.component} belongs to a block: hidden_index must be at least 1")
        if self.head != -1 and (self.component not in (Z, *INPUTS) or self.head < 0):
            raise ConfigError(f"head {self.head}: a head index is for {Z} and a head's inputs ({', '.join(INPUTS)}) only, and at least 0")

    @property
    def role(self) -> str:
        """The single role of a one-role location (what the cache's datasets and the type control key on).

        Raises:
            ConfigError: the location has several roles.
        """
        if len(self.roles) != 1:
            raise ConfigError(f"location {self} has {len(self.roles)} token roles; this needs one")
        return self.roles[0]

    def at(self, role: str) -> "Location":
        """The same site at one ``role``."""
        return Location(self.hidden_index, role, self.component, self.head)

    @property
    def layer(self) -> int:
        """Block index in the canonical name (0 for the embedding output)."""
        return max(self.hidden_index - 1, 0)

    @property
    def hook(self) -> str:
        """The hook name after ``blocks.{l}.``: ``hook_resid_post``, ``attn.hook_z.h3``, ..."""
        if self.component:
            return self.component + (f".h{self.head}" if self.head >= 0 else "")
        return RESID_PRE if self.hidden_index == 0 else RESID_POST

    @property
    def site(self) -> str:
        """The layer output or component without the role, e.g. ``blocks.2.hook_resid_post``."""
        return f"blocks.{self.layer}.{self.hook}"

    @property
    def is_residual(self) -> bool:
        """Whether this is a residual-stream location (an embedding or block output)."""
        return not self.component

    def token_width(self, config) -> int:
        """Floats per token (from a Hugging Face ``config``): ``d_head`` for one head's ``hook_z``, every query head's
        ``d_head`` for all heads' (d_model in an encoder; a decoder's heads need not add up to it), else ``d_model``."""
        if self.head >= 0:
            return head_dim(config)
        if self.component in (Z, Q):
            return config.num_attention_heads * head_dim(config)
        if self.component in (K, V):
            return kv_heads(config) * head_dim(config)
        return config.hidden_size

    def __str__(self) -> str:
        return f"{self.site}@{'+'.join(self.roles)}"

    @classmethod
    def parse(cls, text: str, n_layers: int | None = None, n_heads: int | None = None) -> "Location":
        """Parse ``blocks.{l}.{hook}@{role}[+{role}...]``, ``hook`` one of the sites in the module's table.

        ``blocks.{l}.hook_resid_pre`` for l >= 1 is the same vector as
        ``blocks.{l-1}.hook_resid_post`` and is normalized to it;
        ``hook_out`` (the TransformerBridge's name) is ``hook_resid_post``.

        Raises:
            ConfigError: malformed text, unknown role, a layer out of range
                for a model of ``n_layers`` blocks, or a head out of range for
                ``n_heads`` heads.

        >>> loc = Location.parse("blocks.1.attn.hook_z.h3@w_h")
        >>> loc.component, loc.head, loc.layer, loc.hidden_index
        ('attn.hook_z', 3, 1, 2)
        >>> Location.parse("blocks.1.hook_out@cls") == Location.parse("blocks.1.hook_resid_post@cls")
        True
        """
        match = _PATTERN.fullmatch(text.strip())
        if not match:
            raise ConfigError(
                f"location {text!r} is not of the form blocks.<layer>.<hook>@<role>[+<role>...] with <hook> one of "
                "hook_resid_post, hook_attn_out, hook_resid_mid, hook_mlp_out, attn.hook_z, attn.hook_z.h<head> "
                "(or blocks.0.hook_resid_pre), a role a task's token role such as cls or w_h"
            )
        layer, hook, role = int(match[1]), match[2], match[3]
        if n_layers is not None and not (layer < n_layers):
            raise ConfigError(f"location {text!r}: layer {layer} is out of range for a model with {n_layers} blocks (0..{n_layers - 1})")
        roles = tuple(role.split("+"))
        if hook == RESID_PRE:
            return cls(layer, roles)
        if hook in (RESID_POST, "hook_out"):
            return cls(layer + 1, roles)
        head = -1
        if hook.startswith("attn.hook_") and len(hook) > len(Z):  # attn.hook_z.h3, attn.hook_q.h0, ...
            hook, head = hook[: len(Z)], int(hook[len(Z) + 2 :])
            if n_heads is not None and head >= n_heads:
                raise ConfigError(f"location {text!r}: head {head} is out of range for a model with {n_heads} heads (0..{n_heads - 1})")
        return cls(layer + 1, roles, hook, head)


def all_locations(n_layers: int, roles: Sequence[str]) -> list[Location]:
    """Every location of a model with ``n_layers`` blocks at a task's ``roles``: (n_layers + 1) × len(roles), embedding output first."""
    return [Location(index, role) for index in range(n_layers + 1) for role in roles]


def component_locations(n_layers: int, roles: Sequence[str | Sequence[str]], kinds: Sequence[str] = COMPONENTS,
                        n_heads: int | None = None) -> list[Location]:  # fmt: skip
    """Every component site of the ``kinds`` in each block, at each role (set) of ``roles``.

    ``attn.hook_z`` with ``n_heads`` gives one location per head
    (``attn.hook_z.h0`` ...), without it the concatenated heads.
    Ordered by block, then kind, then head, then role.

    >>> [str(loc) for loc in component_locations(1, ["cls"], ("attn.hook_z", "hook_mlp_out"), n_heads=2)]
    ['blocks.0.attn.hook_z.h0@cls', 'blocks.0.attn.hook_z.h1@cls', 'blocks.0.hook_mlp_out@cls']
    """
    sets = [(r,) if isinstance(r, str) else tuple(r) for r in roles]
    found = []
    for layer in range(n_layers):
        for kind in kinds:
            heads = range(n_heads) if kind == Z and n_heads is not None else [-1]
            found += [Location(layer + 1, s, kind, h) for h in heads for s in sets]
    return found


def kv_heads(config) -> int:
    """Key/value heads per block: the config's ``num_key_value_heads`` (grouped-query attention), else every query head."""
    return int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)


def head_dim(config) -> int:
    """The width of one attention head's context (``attn.hook_z``): the config's ``head_dim`` where it names one
    (Gemma, Qwen3), else d_model over the query heads."""
    return int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def parse_locations(
    texts: str | list[str], n_layers: int, roles: Sequence[str], default_roles: Sequence[str | Sequence[str]] = (),
    n_heads: int | None = None, aliases: Mapping[str, str] | None = None, inputs: bool = False,
) -> list[Location]:
    """Parse a comma-separated string (or list) of locations.

    ``all`` gives :func:`all_locations` at ``roles`` (one role each);
    ``aligned`` gives every site at each of ``default_roles``. ``heads``
    gives every head's ``attn.hook_z.h{H}`` in every block (``n_heads``
    must be known), ``components`` every ``hook_attn_out``,
    ``hook_resid_mid`` and ``hook_mlp_out``; either at ``default_roles``, or
    at one role set with ``heads@ROLE``. An item
    without ``@ROLE`` (a bare site such as ``blocks.2.hook_resid_post``)
    stands for that site at each of ``default_roles``: the role sets the
    intervened variables are aligned to by default (a set of several roles,
    e.g. MQNLI's ``subj_np``, is one location at all of them). A role that
    ``aliases`` maps is renamed to its value (a decoder's ``cls`` is
    ``last``, :func:`~interp.hooks.templates.reading_aliases`). A head's
    query, key or value input (:data:`INPUTS`) is refused unless ``inputs``
    (path patching's receivers).

    Raises:
        ConfigError: naming ``locations=``: nothing given, a malformed item, a
            role not among ``roles`` (the task's, or the file's), or a bare
            site where no default roles are known.
    """
    items = [t.strip() for t in (texts.split(",") if isinstance(texts, str) else texts) if t.strip()]
    sets = [(r,) if isinstance(r, str) else tuple(r) for r in default_roles]
    if items == ["all"]:
        return all_locations(n_layers, roles)
    if items == ["aligned"]:
        if not sets:
            raise ConfigError("`locations='aligned'`: no variable with a default alignment is known here")
        return [Location(index, s) for s in sets for index in range(n_layers + 1)]
    if not items:
        raise ConfigError("`locations=`: no location given")
    found: list[Location] = []
    for item in items:
        name, _, at = item.partition("@")
        if name in ("heads", "components"):
            if name == "heads" and n_heads is None:
                raise ConfigError("`locations='heads'`: the number of attention heads is not known here")
            if not at and not sets:
                raise ConfigError(f"{named('locations', repr(item))} names no token role; write {name}@ROLE")
            kinds = (Z,) if name == "heads" else (ATTN_OUT, RESID_MID, MLP_OUT)
            found += component_locations(n_layers, [tuple(at.split("+"))] if at else sets, kinds, n_heads)
            continue
        if "@" in item:
            found.append(Location.parse(item, n_layers, n_heads))
            continue
        if not sets:
            raise ConfigError(f"{named('locations', repr(item))} names no token role; write {item}@ROLE")
        found += [Location.parse(f"{item}@{'+'.join(s)}", n_layers, n_heads) for s in sets]
    if aliases:
        found = [Location(loc.hidden_index, tuple(aliases.get(r, r) for r in loc.roles), loc.component, loc.head) for loc in found]
    receivers = [loc for loc in found if loc.component in INPUTS]
    if receivers and not inputs:
        raise ConfigError(f"location {receivers[0]} is a head's query, key or value input: a receiver of path patching only; "
                          "a write there changes what every other token attends to, so it is no interchange site")  # fmt: skip
    unknown = [(loc, r) for loc in found for r in loc.roles if r not in roles]
    if unknown:
        loc, role = unknown[0]
        raise ConfigError(f"unknown token role {role!r} in location {loc}; the roles here are {', '.join(roles)}")
    return list(dict.fromkeys(found))
