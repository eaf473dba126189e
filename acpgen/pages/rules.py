"""The deliberate differences between
acpgen's MDX page and upstream's, as a named rule with its reason.

A difference between the two parsed pages is allowed only when one of these rules
explains it; the parity test also fails when a rule explains nothing (a rule that is
no longer needed must go). Differences that only *add* records (fields, variants or
constraints upstream hid) are counted, not failed: parity means nothing upstream
shows is missing or shown differently.
"""

from __future__ import annotations

import ast
import re

from acpgen.pages.diff import Difference
from acpgen.pages.model import Page, PageType

#: rule name -> reason (the A10 defect it fixes, see docs-format-and-overlays.md)
RULES = {
    "item-types": "D2: upstream wrote nullable arrays as `array | null` (until v0.10.8) and array "
    "variants as type=\"array\"; acpgen keeps the item type (`ContentBlock[] | null`).",
    "nullable-format": "D2: upstream drops the integer format on nullable fields (`integer | null`); "
    "acpgen keeps it (`uint32 | null`) as it does for non-null ones.",
    "map-value-types": "D2: upstream shows a map (`additionalProperties: X`) as `object`; acpgen shows "
    "`map<string, X>`.",
    "any-json": "D2: upstream shows a value of any JSON type as `object`; acpgen shows `any`.",
    "more-constraints": "acpgen shows every constraint of the schema (formats of strings in every "
    "release, item counts); upstream showed Format only from v1.7 and never item counts.",
    "single-variant-object": "D3: a union with one variant is shown as one object with every field "
    "(upstream showed a one-variant Union in some releases and dropped shared fields in others).",
    "untagged-variant-label": "upstream's pre-1.0 generator labelled untagged members `Object` or "
    "`Variant`; acpgen labels them by their title, as upstream does since v1.0.",
    "enum-values-split": "an `enum: [a, b]` member of an open enum is shown as one variant per value "
    "(upstream: one variant labelled `a | b`); every value stays on the page.",
}

_EXTRA_CONSTRAINTS = {
    "Format",
    "Min items",
    "Max items",
    "Min length",
    "Max length",
    "Exclusive minimum",
    "Exclusive maximum",
    "Multiple of",
    "Content encoding",
    "Pattern",
}

_TYPE_RULES = (
    ("item-types", re.compile(r"^(?:[\w.]+|\(.*\))\[\]"), "array"),
    ("nullable-format", re.compile(r"^u?int(?:8|16|32|64)(?= \| null$)"), "integer"),
    ("map-value-types", re.compile(r"^map<string, .*>"), "object"),
    ("any-json", re.compile(r"^any(?= \| null$|$)"), "object"),
)


def _downgrade(text: str) -> tuple[str, set[str]]:
    used: set[str] = set()
    for name, pattern, replacement in _TYPE_RULES:
        new = pattern.sub(replacement, text)
        if new != text:
            used.add(name)
            text = new
    return text, used


def _type_of(page: Page, where: str) -> PageType | None:
    name = re.split(r"[.|(]", where, maxsplit=1)[0]
    found = page.type_named(name)
    return found[0] if found else None


def explain(d: Difference, ours: Page, theirs: Page) -> str | None:
    """The rule that allows ``d``, ``"extra"`` for additions, or None."""
    if d.what == "extra":
        return "extra"
    if d.what in ("type", "variant-type"):
        lowered, used = _downgrade(d.ours)
        if lowered == d.theirs and used:
            return sorted(used)[0]
        return None
    if d.what == "constraints":
        mine, ref = ast.literal_eval(d.ours), ast.literal_eval(d.theirs)  # dict reprs written by diff_pages
        if all(mine.get(k) == v for k, v in ref.items()) and set(mine) - set(ref) <= _EXTRA_CONSTRAINTS:
            return "more-constraints"
        return None
    their_type, our_type = _type_of(theirs, d.where), _type_of(ours, d.where)
    if their_type is None or our_type is None:
        return None
    if our_type.kind == "Object" and their_type.kind == "Union" and len(their_type.variants) == 1:
        mine = {f.name: f.required for f in our_type.fields}
        needed = their_type.variants[0].fields + their_type.shared
        if all(mine.get(f.name) == f.required for f in needed):
            if d.what == "kind" or (d.what == "missing" and "|" in d.where):
                return "single-variant-object"
    if d.what == "missing" and "|" in d.where:
        label = d.where.split("|", 1)[1]
        labels = {v.label for v in our_type.variants}
        if " | " in label and set(label.split(" | ")) <= labels:
            return "enum-values-split"
        if label.split("#")[0] in ("Object", "Variant"):
            theirs_v = next(v for v in their_type.variants if v.label == label.split("#")[0])
            unmatched = [v for v in our_type.variants if v.label not in {t.label for t in their_type.variants}]
            for v in unmatched:
                mine = {f.name for f in v.fields}
                if {f.name for f in theirs_v.fields} <= mine:
                    return "untagged-variant-label"
    return None
