"""Where a schema or an overlay named on the command line or in the config is.

A plain path is itself (relative to the config's directory). ``bundled:<release>`` is a
release shipped inside acpgen (``bundled:v0.1.3``), ``rfd:<name>`` one of its RFD overlays
(``rfd:open-enums``); both live in the package data (``acpgen/schemas`` in the wheel,
``schemas/`` in a checkout), so an installed acpgen needs no checkout. Remote schemas
(``https://...``, ``acp@<tag>``) are resolved by ``acpgen.fetch`` into its cache first.
"""

from __future__ import annotations

from pathlib import Path

from acpgen.errors import AcpgenError, Diagnostic, did_you_mean

BUNDLED = "bundled:"
RFD = "rfd:"


def assets_dir() -> Path:
    """The bundled schemas and overlays: packaged beside the code, else the checkout's."""
    packaged = Path(__file__).resolve().parent / "schemas"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "schemas"


def bundled_releases() -> list[str]:
    base = assets_dir() / "acp"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def bundled_overlays() -> list[Path]:
    base = assets_dir() / "rfds"
    return sorted(base.glob("*.yaml")) if base.is_dir() else []


def is_remote(spec: str) -> bool:
    return spec.startswith(("http://", "https://", "acp@"))


def locate_schema(spec: str, root: Path) -> Path:
    """The local path of a schema spec (remote specs go through ``acpgen.fetch``)."""
    if spec.startswith(BUNDLED):
        name = spec[len(BUNDLED) :]
        known = bundled_releases()
        if name not in known:
            hint = did_you_mean(name, known)
            raise AcpgenError(
                [Diagnostic("ACPG100", f"no bundled release {name!r}; bundled: {', '.join(known) or 'none'}{hint}", spec)]
            )
        return assets_dir() / "acp" / name
    return root / spec


def locate_overlay(spec: str, root: Path) -> Path:
    if spec.startswith(RFD):
        name = spec[len(RFD) :]
        known = [p.stem for p in bundled_overlays()]
        if name not in known:
            hint = did_you_mean(name, known)
            raise AcpgenError(
                [Diagnostic("ACPG100", f"no bundled overlay {name!r}; bundled: {', '.join(known) or 'none'}{hint}", spec)]
            )
        return assets_dir() / "rfds" / f"{name}.yaml"
    return root / spec


def default_out_name(spec: str) -> str:
    """``generated/<this>`` when no --out is given: the release's name (``bundled:v0.1.3``,
    ``acp@schema-v1.21.0``), or the schema file's or directory's."""
    for prefix in (BUNDLED, "acp@"):
        if spec.startswith(prefix):
            return spec[len(prefix) :]
    if spec.startswith(("http://", "https://")):
        return spec.rstrip("/").rsplit("/", 1)[-1].removesuffix(".json") or "schema"
    return Path(spec).resolve().name.removesuffix(".json")
