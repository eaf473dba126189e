"""JSON pointers as acpgen writes them in every diagnostic and origin (``acpgen/source.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from jsonpointer import JsonPointer

from acpgen.source import escape_token, pointer_join


def test_tokens_are_escaped_as_rfc_6901_says() -> None:
    assert pointer_join("/$defs", "a/b", "~c", 3) == "/$defs/a~1b/~0c/3"
    assert pointer_join("", "~1") == "/~01"  # "~" first: "~1" is the text, not an escaped "/"
    assert escape_token("x~/y") == "x~0~1y"


@given(st.lists(st.one_of(st.text(), st.integers(min_value=0)), max_size=5))
def test_a_joined_pointer_reads_back_its_tokens(tokens: list[str | int]) -> None:
    assert JsonPointer(pointer_join("", *tokens)).parts == [str(t) for t in tokens]
