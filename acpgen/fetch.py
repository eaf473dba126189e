"""Schemas from elsewhere: an ``http(s)://`` URL of a schema file, or ``acp@<tag>`` (an
upstream release by tag), downloaded once into the cache and pinned in ``acpgen.lock``.

The source stage, before ``load``: a remote spec becomes a local release directory (or
file) in the cache, laid out as the loader reads it (``v1/schema.json``, ``v2/meta.json``...),
whatever layout upstream used at that tag (``./schema.json``; ``schema/*.json`` with
``schema.v2.unstable.json``; ``schema/v1/`` and ``schema/v2/``, probed in that order from the
newest). Every file is kept by its sha256 (``<cache>/blobs/``). With a lock entry, nothing is
probed or downloaded when the blobs are cached, and a file downloaded again must have the
pinned sha256 (``ACPG111`` otherwise): a build that has its lock never touches the network
again. A failure (HTTP error, timeout, truncated body, changed file) is one line and exit 2;
the lock is written only by a build that succeeded (:func:`commit`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acpgen.errors import AcpgenError, Diagnostic
from acpgen.source import display_path
from acpgen.stamp import cache_base

UPSTREAM = "https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol"
LOCK = "acpgen.lock"
LOCK_VERSION = 1
TIMEOUT = 30.0

#: upstream layouts, newest first: (file probed, [(upstream path, local path, required)])
_TREES = [
    (f"schema/{t}/{kind}{u}.json", f"{t}/{kind}{u}.json", False)
    for t in ("v1", "v2")
    for kind in ("schema", "meta")
    for u in ("", ".unstable")
]
LAYOUTS: list[tuple[str, list[tuple[str, str, bool]]]] = [
    ("schema/v1/schema.json", [(p, local, p == "schema/v1/schema.json") for p, local, _ in _TREES]),
    (
        "schema/schema.json",
        [
            ("schema/schema.json", "v1/schema.json", True),
            ("schema/meta.json", "v1/meta.json", False),
            ("schema/methods.json", "v1/methods.json", False),
            ("schema/schema.unstable.json", "v1/schema.unstable.json", False),
            ("schema/meta.unstable.json", "v1/meta.unstable.json", False),
            ("schema/schema.v2.unstable.json", "v2/schema.unstable.json", False),
            ("schema/meta.v2.unstable.json", "v2/meta.unstable.json", False),
        ],
    ),
    ("schema.json", [("schema.json", "v1/schema.json", True)]),
]


@dataclass
class Fetcher:
    """One run's view of the cache and the lock."""

    lock_path: Path
    upstream: str = UPSTREAM
    timeout: float = TIMEOUT
    cache: Path | None = None
    #: entries this run found or downloaded, written by :func:`commit` after a good build
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cache is None:
            base = cache_base()
            self.cache = (base / "fetch") if base else Path(tempfile.mkdtemp(prefix="acpgen-fetch-"))
        self.locked = read_lock(self.lock_path)

    # ------------------------------------------------------------------ public

    def resolve(self, spec: str) -> Path:
        """The local path (release directory or schema file) of a remote spec."""
        entry = self.locked.get(spec)
        if entry is not None:
            if spec.startswith("acp@") and entry.get("upstream") != self.upstream:
                raise AcpgenError(
                    [
                        Diagnostic(
                            "ACPG112",
                            f"{LOCK} pins {spec} from {entry.get('upstream')}, not {self.upstream}: "
                            "remove its entry to fetch it again",
                            display_path(self.lock_path),
                            "/sources/" + _escape(spec),
                        )
                    ]
                )
            files = self._pinned(spec, entry)
        elif spec.startswith("acp@"):
            entry, files = self._tag(spec)
        else:
            entry, files = self._url(spec)
        self.pending[spec] = entry
        return self._assemble(spec, files)

    # ------------------------------------------------------------------ sources

    def _tag(self, spec: str) -> tuple[dict[str, Any], dict[str, bytes]]:
        tag = spec[len("acp@") :]
        base = f"{self.upstream.rstrip('/')}/{tag}"
        tried = []
        for probe, files in LAYOUTS:
            first = self._get(f"{base}/{probe}", spec, optional=True)
            tried.append(probe)
            if first is None:
                continue
            found: dict[str, bytes] = {}
            urls: dict[str, str] = {}
            for upstream_path, local, _ in files:
                url = f"{base}/{upstream_path}"
                body = first if upstream_path == probe else self._get(url, spec, optional=True)
                if body is not None:
                    found[local] = body
                    urls[local] = url
            entry = {"upstream": self.upstream, "files": _pins(found, urls)}
            return entry, found
        raise AcpgenError(
            [Diagnostic("ACPG110", f"no ACP schema at {base} (tried {', '.join(tried)})", spec)]
        )

    def _url(self, spec: str) -> tuple[dict[str, Any], dict[str, bytes]]:
        name = spec.rstrip("/").rsplit("/", 1)[-1] or "schema.json"
        body = self._get(spec, spec, optional=False)
        assert body is not None
        found, urls = {name: body}, {name: spec}
        meta = _meta_name(name)
        if meta:
            url = spec.rstrip("/").rsplit("/", 1)[0] + "/" + meta
            body = self._get(url, spec, optional=True)
            if body is not None:
                found[meta], urls[meta] = body, url
        return {"files": _pins(found, urls)}, found

    def _pinned(self, spec: str, entry: dict[str, Any]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for local, pin in sorted(entry.get("files", {}).items()):
            blob = self._blob(pin["sha256"])
            if blob is not None:
                out[local] = blob
                continue
            body = self._get(pin["url"], spec, optional=False)
            assert body is not None
            got = hashlib.sha256(body).hexdigest()
            if got != pin["sha256"]:
                raise AcpgenError(
                    [
                        Diagnostic(
                            "ACPG111",
                            f"{pin['url']} changed since {LOCK} pinned it (sha256 {pin['sha256'][:12]}..., now "
                            f"{got[:12]}...): check the change, then remove the entry to accept it",
                            spec,
                        )
                    ]
                )
            out[local] = body
        return out

    # ------------------------------------------------------------------ network and cache

    def _get(self, url: str, spec: str, optional: bool) -> bytes | None:
        # the network modules cost ~30 ms to import: only a build that downloads pays
        import http.client
        import socket
        import urllib.error
        import urllib.request

        def fail(message: str) -> AcpgenError:
            return AcpgenError([Diagnostic("ACPG110", f"{url}: {message}", spec)])

        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                expected = response.headers.get("Content-Length")
                body: bytes = response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and optional:
                return None
            raise fail(f"HTTP {exc.code} {exc.reason}")
        except (TimeoutError, socket.timeout):
            raise fail(f"timed out after {self.timeout:g} s")
        except http.client.IncompleteRead as exc:
            raise fail(f"the body was cut off after {len(exc.partial)} bytes")
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise fail(f"timed out after {self.timeout:g} s")
            raise fail(f"cannot reach it ({reason})")
        except (ConnectionError, http.client.HTTPException) as exc:
            raise fail(f"the connection failed ({type(exc).__name__})")
        if expected is not None and expected.isdigit() and int(expected) != len(body):
            raise fail(f"the body was cut off after {len(body)} of {expected} bytes")
        return body

    def _blob(self, sha: str) -> bytes | None:
        assert self.cache is not None
        path = self.cache / "blobs" / sha
        if path.is_file():
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() == sha:
                return data
        return None

    def _assemble(self, spec: str, files: dict[str, bytes]) -> Path:
        """The files, under their local names, in a directory keyed by their content."""
        assert self.cache is not None
        pins = sorted((name, hashlib.sha256(body).hexdigest()) for name, body in files.items())
        for (name, sha), body in zip(pins, (files[n] for n, _ in pins)):
            _write_once(self.cache / "blobs" / sha, body)
        key = hashlib.sha256(json.dumps(pins).encode()).hexdigest()[:32]
        root = self.cache / "releases" / key
        for name, sha in pins:
            _write_once(root / name, files[name])
        if spec.startswith("acp@"):
            return root
        return root / next(n for n, _ in pins if not n.startswith("meta"))


def _write_once(path: Path, data: bytes) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _pins(found: dict[str, bytes], urls: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {"url": urls[name], "sha256": hashlib.sha256(body).hexdigest()} for name, body in sorted(found.items())}


def _meta_name(name: str) -> str | None:
    """``schema.unstable.json`` -> ``meta.unstable.json``, ``schema.v2.json`` -> ``meta.v2.json``."""
    return "meta" + name[len("schema") :] if name.startswith("schema") else None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def read_lock(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}

    def bad(message: str) -> AcpgenError:
        return AcpgenError([Diagnostic("ACPG112", message, display_path(path))])

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad(f"not a lock file acpgen wrote: {exc}")
    if not isinstance(doc, dict) or doc.get("version") != LOCK_VERSION or not isinstance(doc.get("sources"), dict):
        raise bad(f"not a version {LOCK_VERSION} lock file (remove it to pin the sources again)")
    for spec, entry in doc["sources"].items():
        files = entry.get("files") if isinstance(entry, dict) else None
        ok = isinstance(files, dict) and all(
            isinstance(p, dict) and isinstance(p.get("url"), str) and isinstance(p.get("sha256"), str) for p in files.values()
        )
        if not ok:
            raise AcpgenError([Diagnostic("ACPG112", "malformed entry", display_path(path), "/sources/" + _escape(spec))])
    return dict(doc["sources"])


def lock_text(sources: dict[str, dict[str, Any]]) -> str:
    return json.dumps({"version": LOCK_VERSION, "sources": dict(sorted(sources.items()))}, indent=2, sort_keys=True) + "\n"


def commit(fetcher: Fetcher) -> None:
    """After a good build: record every remote source it used in the lock (unchanged
    entries are kept; the file is rewritten only when something new was pinned)."""
    if not fetcher.pending:
        return
    merged = dict(fetcher.locked)
    merged.update(fetcher.pending)
    text = lock_text(merged)
    if fetcher.lock_path.is_file() and fetcher.lock_path.read_text(encoding="utf-8") == text:
        return
    _write_once(fetcher.lock_path, text.encode("utf-8"))
