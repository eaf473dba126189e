"""acpgen/render/pyviews.py: which routed unions the Pydantic module gives ``_WireTag``
(read from JSON by pydantic-core alone), on IR built here."""

from __future__ import annotations

import pytest

from acpgen import ir
from acpgen.render.pyviews import wire_routed

AT = ir.Origin("s.json", "/$defs/U")


def _union(*variants: ir.Variant) -> ir.TaggedUnionDef:
    return ir.TaggedUnionDef("U", AT, "type", variants)


A = ir.Variant("U#a", "tagged", AT, tag_value="a")
B = ir.Variant("U#b", "tagged", AT, tag_value="b")


@pytest.mark.parametrize(
    ("other", "routed"),
    [
        (None, True),  # closed
        (
            ir.Variant("U#default", "default", AT),
            True,
        ),  # the default stands behind each tag
        # a default that rules out a known tag is not checked by its class: only the
        # routing function keeps a value with that tag from it
        (ir.Variant("U#default", "default", AT, excludes=(("type", ("a",)),)), False),
        (
            ir.Variant("U#default", "default", AT, excludes=(("type", ("a", "b")),)),
            False,
        ),
        (
            ir.Variant("U#default", "default", AT, excludes=(("kind", ("a",)),)),
            True,
        ),  # another member
        (ir.Variant("U#fallback", "fallback", AT), False),  # an open union
    ],
)
def test_only_a_union_whose_default_stands_behind_every_tag_is_wire_routed(
    other: ir.Variant | None, routed: bool
) -> None:
    d = _union(A, B, *((other,) if other else ()))
    assert wire_routed(d) is routed
