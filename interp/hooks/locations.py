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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from interp.core.errors import ConfigError

RESID_PRE = "hook_resid_pre"
RESID_POST = "hook_resid_post"
_ROLE = r"[A-Za-z_][\w.]*"
_PATTERN = re.compile(rf"blocks\.(\d+)\.(hook_resid_pre|hook_resid_post)@({_ROLE}(?:\+{_ROLE})*)")


@dataclass(frozen=True, order=True)
class Location:
    """A hidden-state index and the token roles read there; ``str()`` gives the canonical name.

    ``hidden_index`` 0 is the embedding output, ``l + 1`` the output of block l.
    ``roles`` is one role name or a tuple of them (kept in the given order:
    the order of the concatenated vector); ``Location(3, "w_h")`` is
    ``Location(3, ("w_h",))``.

    Raises:
        ConfigError: a role that is not a name, a role named twice, no role, or a negative index.
    """

    hidden_index: int
    roles: tuple[str, ...]

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
        return Location(self.hidden_index, role)

    @property
    def layer(self) -> int:
        """Block index in the canonical name (0 for the embedding output)."""
        return max(self.hidden_index - 1, 0)

    @property
    def hook(self) -> str:
        return RESID_PRE if self.hidden_index == 0 else RESID_POST

    @property
    def site(self) -> str:
        """The layer output without the role, e.g. ``blocks.2.hook_resid_post``."""
        return f"blocks.{self.layer}.{self.hook}"

    def __str__(self) -> str:
        return f"{self.site}@{'+'.join(self.roles)}"

    @classmethod
    def parse(cls, text: str, n_layers: int | None = None) -> "Location":
        """Parse ``blocks.{l}.hook_resid_{pre,post}@{role}[+{role}...]``.

        ``blocks.{l}.hook_resid_pre`` for l >= 1 is the same vector as
        ``blocks.{l-1}.hook_resid_post`` and is normalized to it.

        Raises:
            ConfigError: malformed text, unknown role, or a layer out of range
                for a model of ``n_layers`` blocks.
        """
        match = _PATTERN.fullmatch(text.strip())
        if not match:
            raise ConfigError(
                f"location {text!r} is not of the form blocks.<layer>.hook_resid_post@<role>[+<role>...] "
                "(or blocks.0.hook_resid_pre@<role>), a role a task's token role such as cls or w_h"
            )
        layer, hook, role = int(match[1]), match[2], match[3]
        index = layer + 1 if hook == RESID_POST else layer
        if n_layers is not None and not (layer < n_layers):
            raise ConfigError(f"location {text!r}: layer {layer} is out of range for a model with {n_layers} blocks (0..{n_layers - 1})")
        return cls(index, tuple(role.split("+")))


def all_locations(n_layers: int, roles: Sequence[str]) -> list[Location]:
    """Every location of a model with ``n_layers`` blocks at a task's ``roles``: (n_layers + 1) × len(roles), embedding output first."""
    return [Location(index, role) for index in range(n_layers + 1) for role in roles]


def parse_locations(
    texts: str | list[str], n_layers: int, roles: Sequence[str], default_roles: Sequence[str | Sequence[str]] = ()
) -> list[Location]:
    """Parse a comma-separated string (or list) of locations.

    ``all`` gives :func:`all_locations` at ``roles`` (one role each);
    ``aligned`` gives every site at each of ``default_roles``. An item
    without ``@ROLE`` (a bare site such as ``blocks.2.hook_resid_post``)
    stands for that site at each of ``default_roles``: the role sets the
    intervened variables are aligned to by default (a set of several roles,
    e.g. MQNLI's ``subj_np``, is one location at all of them).

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
            raise ConfigError("locations='aligned': no variable with a default alignment is known here")
        return [Location(index, s) for s in sets for index in range(n_layers + 1)]
    if not items:
        raise ConfigError("locations=: no location given")
    found: list[Location] = []
    for item in items:
        if "@" in item:
            found.append(Location.parse(item, n_layers))
            continue
        if not sets:
            raise ConfigError(f"locations={item!r} names no token role; write {item}@ROLE")
        found += [Location.parse(f"{item}@{'+'.join(s)}", n_layers) for s in sets]
    unknown = [(loc, r) for loc in found for r in loc.roles if r not in roles]
    if unknown:
        loc, role = unknown[0]
        raise ConfigError(f"unknown token role {role!r} in location {loc}; the roles here are {', '.join(roles)}")
    return list(dict.fromkeys(found))
