"""Location names: one string form, parsed in one place."""

from __future__ import annotations

import pytest

from interp.core.errors import ConfigError
from interp.hooks.locations import Location, all_locations, parse_locations
from interp.tasks.monli import ROLES


@pytest.mark.parametrize(
    "text, index, role",
    [
        ("blocks.0.hook_resid_pre@cls", 0, "cls"),
        ("blocks.0.hook_resid_post@w_p", 1, "w_p"),
        ("blocks.5.hook_resid_post@w_h", 6, "w_h"),
    ],
)
def test_parse_and_print_round_trip(text, index, role):
    loc = Location.parse(text, n_layers=6)
    assert (loc.hidden_index, loc.role) == (index, role) and str(loc) == text


def test_resid_pre_of_a_later_block_is_the_previous_block_output():
    assert Location.parse("blocks.3.hook_resid_pre@w_h") == Location.parse("blocks.2.hook_resid_post@w_h")
    assert str(Location.parse("blocks.3.hook_resid_pre@w_h")) == "blocks.2.hook_resid_post@w_h"


def test_paper_naming():
    """BERT^r_t is blocks.{r-1}.hook_resid_post@t: hidden_states[r]."""
    assert Location.parse("blocks.2.hook_resid_post@cls").hidden_index == 3


@pytest.mark.parametrize(
    "text, message",
    [
        ("blocks.6.hook_resid_post@cls", "layer 6 is out of range for a model with 6 blocks"),
        ("blocks.1.hook_resid_post@9lives", "is not of the form"),
        ("layer3@w_h", "is not of the form"),
        ("blocks.1.hook_attn_in@w_h", "is not of the form"),
        ("blocks.1.attn.hook_z.h12@w_h", "head 12 is out of range for a model with 12 heads"),
    ],
)
def test_bad_locations(text, message):
    with pytest.raises(ConfigError, match=message):
        Location.parse(text, n_layers=6, n_heads=12)


def test_all_locations_of_a_six_block_model():
    locs = all_locations(6, ROLES)
    assert len(locs) == 21 and len(set(locs)) == 21
    assert str(locs[0]) == "blocks.0.hook_resid_pre@cls" and str(locs[-1]) == "blocks.5.hook_resid_post@w_h"
    assert parse_locations("all", 6, ROLES) == locs
    assert parse_locations("blocks.1.hook_resid_post@w_h, blocks.0.hook_resid_pre@cls", 6, ROLES) == [
        Location(2, "w_h"),
        Location(0, "cls"),
    ]
    # a task's own roles: any name; a role the task lacks is refused, a bare site takes the aligned roles
    assert parse_locations("blocks.0.hook_resid_post@n_s.p", 6, ("cls", "n_s.p")) == [Location(1, "n_s.p")]
    with pytest.raises(ConfigError, match="unknown token role 'premise' in location blocks.1.hook_resid_post@premise"):
        parse_locations("blocks.1.hook_resid_post@premise", 6, ROLES)
    assert parse_locations("blocks.1.hook_resid_post", 6, ROLES, ("cls", "w_h")) == [Location(2, "cls"), Location(2, "w_h")]
    with pytest.raises(ConfigError, match="names no token role; write blocks.1.hook_resid_post@ROLE"):
        parse_locations("blocks.1.hook_resid_post", 6, ROLES)
