"""Hooks and locations: the location grammar, and context managers that read or replace vectors and always remove themselves."""

from interp.hooks.context import hooked, n_layers, site_modules, token_columns
from interp.hooks.locations import Location, all_locations, parse_locations

__all__ = ["Location", "all_locations", "hooked", "n_layers", "parse_locations", "site_modules", "token_columns"]
