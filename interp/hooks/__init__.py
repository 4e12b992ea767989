"""Hooks and locations: the location grammar, and context managers that read or replace vectors and always remove themselves."""

from interp.hooks.context import feature_slice, hooked, n_layers, site_module, site_modules, token_columns
from interp.hooks.locations import Location, all_locations, component_locations, parse_locations

__all__ = ["Location", "all_locations", "component_locations", "feature_slice", "hooked", "n_layers", "parse_locations", "site_module", "site_modules", "token_columns"]
