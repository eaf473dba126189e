"""Deeply nested schemas: enough stack for any input the JSON reader accepts.

Python's JSON reader stops at about 1,000 levels (ACPG208 in :mod:`acpgen.source`).
Below that, building and rendering recurse a few frames per level, so every stage
after loading runs with a higher limit; anything deeper still is ACPG208, never a
``RecursionError``.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

RECURSION_LIMIT = 8000


@contextmanager
def deep_stack() -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
