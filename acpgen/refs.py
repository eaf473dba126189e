"""Local ``$ref`` resolution through ``referencing`` (no hand-written resolver).

ACP schemas only use local ``#/$defs/...`` references; anything remote is an
error, as is a reference that does not resolve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from acpgen.errors import AcpgenError
from acpgen.source import SourceFile

BASE_URI = "urn:acpgen:document"


@dataclass(frozen=True)
class Target:
    """What a ``$ref`` points at: a def name when it is ``#/$defs/<name>``."""

    pointer: str
    def_name: str | None
    schema: Any


class Resolver:
    def __init__(self, source: SourceFile, document: dict[str, Any]) -> None:
        self._source = source
        resource = DRAFT202012.create_resource(document)
        registry: referencing.Registry[Any] = referencing.Registry().with_resource(BASE_URI, resource)
        self._resolver = registry.resolver(base_uri=BASE_URI)

    def resolve(self, ref: Any, at: str) -> Target:
        if not isinstance(ref, str):
            raise AcpgenError([self._source.diagnostic("ACPG202", "$ref must be a string", at)])
        if not ref.startswith("#"):
            raise AcpgenError(
                [self._source.diagnostic("ACPG204", f"remote $ref {ref!r} is not supported; inline it", at)]
            )
        try:
            contents = self._resolver.lookup(ref).contents
        except (referencing.exceptions.Unresolvable, LookupError):
            raise AcpgenError(
                [self._source.diagnostic("ACPG203", f"$ref {ref!r} does not resolve", at)]
            )
        except (AttributeError, TypeError, ValueError):
            # referencing walks the schemas on the way and trips over malformed ones,
            # which are reported on their own (ACPG201/202)
            message = f"$ref {ref!r} cannot be followed: a schema on its way is malformed"
            raise AcpgenError([self._source.diagnostic("ACPG203", message, at)])
        pointer = ref[1:]
        tokens = pointer.split("/")
        name = None
        if len(tokens) == 3 and tokens[0] == "" and tokens[1] == "$defs":
            name = tokens[2].replace("~1", "/").replace("~0", "~")
        return Target(pointer, name, contents)
