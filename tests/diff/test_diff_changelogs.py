"""Hand-checked cases: a line of upstream's hand-written changelogs (read in place from
../shared/corpus/acp-changelogs), the corpus pair that spans it, and the record (rule,
level, subject, sides) ``acpgen diff`` must report for it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from acpgen.api import load_release
from acpgen.diff import Change, diff_releases
from acpgen.diff.rules import BY_ID
from tests.corpus import ACP, CORPUS, needs_corpus

pytestmark = needs_corpus
CHANGELOGS = CORPUS / "acp-changelogs"
V1, V2, CRATE = "schema-v1-CHANGELOG.md", "schema-v2-CHANGELOG.md", "CHANGELOG.md"
S1, U1, S2, U2 = "v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"

#: (changelog, the line's words, old, new, file, rule, level, subject, variant, breaks)
CASES = [
    (V1, "stabilize elicitation (#1779", "schema-v1.20.0", "main", S1, "moved-to-stable", "info", "elicitation/create", None, ()),
    (V2, "stabilize terminal authentication (#2000", "schema-v1.20.0", "main", S2, "moved-to-stable", "info", "AuthMethod", "terminal", ()),
    # gated by the new `compaction` capability: info, and an info record breaks nobody (#25)
    (V1, "add session compaction updates (#2002", "schema-v1.20.0", "main", U1, "variant-added-closed", "info", "SessionUpdate", "compaction_update", ()),
    (V1, "add session compaction updates (#2002", "schema-v1.20.0", "main", U1, "optional-field-added", "info", "ClientSessionCapabilities.compaction", None, ()),
    (V1, "add tool call name (#1752", "schema-v1.19.1", "schema-v1.20.0", U1, "optional-field-added", "info", "ToolCall.name", None, ()),
    (V2, "add cancelled variant to tool call and plan item (#1750", "schema-v1.19.1", "schema-v1.20.0", S2, "enum-value-added-open", "info", "ToolCallStatus", "cancelled", ()),
    (V2, "add cancelled variant to tool call and plan item (#1750", "schema-v1.19.1", "schema-v1.20.0", S2, "enum-value-added-open", "info", "PlanEntryStatus", "cancelled", ()),
    (V2, "rename diff patch payload to text (#1730", "schema-v1.19.0", "schema-v1.19.1", S2, "field-renamed", "error", "DiffPatch.diff -> DiffPatch.text", None, ("agent", "client")),
    (V2, "add v2 terminal output surface (#1679", "schema-v1.19.0", "schema-v1.19.1", S2, "variant-added-open", "info", "SessionUpdate", "terminal_output_chunk", ()),
    (V2, "add v2 semantic string types (#1742", "schema-v1.19.0", "schema-v1.19.1", S2, "def-added", "info", "AbsolutePath", None, ()),
    (V1, "Stabilize boolean session config options (#1604", "schema-v1.16.0", "schema-v1.19.0", S1, "moved-to-stable", "info", "SessionConfigOption", "boolean", ()),
    (V1, "Unify the ID naming conventions across the schema (#1567", "schema-v1.16.0", "schema-v1.19.0", S2, "field-renamed", "error", "PlanItems.id -> PlanItems.planId", None, ("agent", "client")),
    (V1, "remove URL elicitation error (#1574", "schema-v1.16.0", "schema-v1.19.0", U1, "enum-value-removed-open", "warning", "ErrorCode", "-32042", ("agent", "client")),
    (V1, "Continue to make more enums future compatible (#1571", "schema-v1.16.0", "schema-v1.19.0", S2, "union-opened", "warning", "RequestPermissionOutcome", None, ("agent",)),
    (V1, "Stabilize request cancellation (#1549", "schema-v1.16.0", "schema-v1.19.0", S1, "moved-to-stable", "info", "$/cancel_request", None, ()),
    (V1, "make mcpServers optional in new sessions (#1523", "schema-v1.16.0", "schema-v1.19.0", S2, "field-now-optional", "error", "NewSessionRequest.mcpServers", None, ("agent",)),
    (CRATE, "Group v2 auth methods under auth/* (#1519", "schema-v1.16.0", "schema-v1.19.0", S2, "method-renamed", "error", "authenticate -> auth/login", None, ("agent", "client")),
    (CRATE, "Group v2 auth methods under auth/* (#1519", "schema-v1.16.0", "schema-v1.19.0", S2, "method-renamed", "error", "logout -> auth/logout", None, ("agent", "client")),
    (CRATE, "Require auth logout support (#1520", "schema-v1.16.0", "schema-v1.19.0", S2, "capability-gate-removed", "warning", "AgentAuthCapabilities.logout", None, ("agent",)),
    (CRATE, "require v2 implementation info (#1517", "schema-v1.16.0", "schema-v1.19.0", S2, "required-field-added", "error", "InitializeRequest.info", None, ("client",)),
    (CRATE, "allow null auth capabilities (#1539", "schema-v1.16.0", "schema-v1.19.0", S2, "became-nullable", "error", "AgentCapabilities.auth", None, ("client",)),
    (CRATE, "require more session methods by default (#1578", "schema-v1.16.0", "schema-v1.19.0", S2, "capability-gate-removed", "warning", "SessionCapabilities.list", None, ("agent",)),
    # session/load was only available behind `SessionCapabilities.load`, removed in the same
    # release: no new agent advertises it, so no old client calls it (#25, family 5)
    (CRATE, "Unify session/load and session/resume (#1584", "schema-v1.16.0", "schema-v1.19.0", S2, "method-removed", "info", "session/load", None, ()),
    (CRATE, "New diff format (#1586", "schema-v1.16.0", "schema-v1.19.0", S2, "required-field-added", "error", "Diff.changes", None, ("agent",)),
    (CRATE, "More flexible permission requests (#1577", "schema-v1.16.0", "schema-v1.19.0", S2, "required-field-removed", "error", "RequestPermissionRequest.toolCall", None, ("client",)),
    (CRATE, "tighten v2 field validation (#1587", "schema-v1.16.0", "schema-v1.19.0", S2, "constraint-tightened", "error", "Cost.currency", None, ("agent",)),
    (V1, "Stabilize model_config option category (#1502", "schema-v1.15.0", "schema-v1.16.0", S1, "moved-to-stable", "info", "SessionConfigOptionCategory", "model_config", ()),
    # data-flow gates: the id each method needs comes only in optional members (and union
    # variants) of what the other side sends, added, stabilised or removed with it
    (CRATE, "Remove dedicated session modes and models apis from v2 (#1324", "v0.13.4", "v0.13.5", U2, "method-removed", "info", "session/set_mode", None, ()),
    (CRATE, "Remove dedicated session modes and models apis from v2 (#1324", "v0.13.4", "v0.13.5", U2, "method-removed", "info", "session/set_model", None, ()),
    (CRATE, "Stabilize Session Config Options (#411", "v0.10.7", "v0.11.1", S1, "moved-to-stable", "info", "session/set_config_option", None, ()),
    (CRATE, "Draft implementation of session config options (#339", "v0.10.3", "v0.10.6", U1, "method-added", "info", "session/set_config_option", None, ()),
    (CRATE, "Add experimental MCP-over-ACP message types (#1185", "v0.12.2", "v0.13.0", U1, "method-added", "info", "mcp/connect", None, ()),
    (CRATE, "Stabilize logout method (#1273", "v0.13.2", "v0.13.3", S1, "moved-to-stable", "info", "logout", None, ()),
    (CRATE, "Rename provider method types to singular (#1272", "v0.13.2", "v0.13.3", U1, "def-renamed", "info", "SetProvidersRequest -> SetProviderRequest", None, ()),
    # the client learns a `ModelId` only from the optional `models` of the session responses,
    # removed with it: no new agent sends `models`, so no old client calls it (data-flow gate)
    (CRATE, "Remove unstable session model API (#1325", "v0.13.4", "v0.13.5", U1, "method-removed", "info", "session/set_model", None, ()),
    (CRATE, "Stabilize additionalDirectories for sessions (#1327", "v0.13.4", "v0.13.5", S1, "moved-to-stable", "info", "NewSessionRequest.additionalDirectories", None, ()),
    (CRATE, "Add v2 enum extension RFD and fallbacks (#1304", "v0.13.4", "v0.13.5", U2, "enum-opened", "warning", "StopReason", None, ("client",)),
    (CRATE, "Stabilize session/delete (#1370", "v0.13.5", "schema-v1.13.7", S1, "moved-to-stable", "info", "session/delete", None, ()),
    # v1 stable SessionUpdate is closed and no capability gates usage_update: a client built
    # on the old stable file rejects it, as it would any variant added there (#25, family 2)
    (CRATE, "Stabilize session usage updates (#1371", "v0.13.5", "schema-v1.13.7", S1, "moved-to-stable-breaking", "error", "SessionUpdate", "usage_update", ("client",)),
    (CRATE, "Stabilize optional message IDs (#1372", "v0.13.5", "schema-v1.13.7", S1, "moved-to-stable", "info", "ContentChunk.messageId", None, ()),
    # fs/read_text_file went with its gate `FileSystemCapabilities.readTextFile` (and the whole
    # `ClientCapabilities.fs`): no new client advertises it, no old agent calls it (#25, family 5)
    (CRATE, "Remove v2 client filesystem and terminal surface (#1346", "v0.13.5", "schema-v1.13.7", U2, "method-removed", "info", "fs/read_text_file", None, ()),
    (CRATE, "Require message IDs in v2 chunks (#1352", "v0.13.5", "schema-v1.13.7", U2, "field-now-required", "error", "ContentChunk.messageId", None, ("agent",)),
    # an optional member of an object open to undeclared members: an old client's
    # `planCapabilities` stays valid for a new agent (and `plan` for an old one); the agent
    # loses what it said, as if it were removed: warning for the receiver (#25, family 7)
    (CRATE, "Fix plan capability key (#1369", "v0.13.5", "schema-v1.13.7", U1, "field-renamed", "warning", "ClientCapabilities.planCapabilities -> ClientCapabilities.plan", None, ("agent",)),
]


def changelog_line(log: str, words: str) -> str:
    """The line of ``log`` with the title and the pull request of ``words`` (``title (#123``)."""
    title, _, pr = words.partition(" (#")
    lines = [line for line in (CHANGELOGS / log).read_text().splitlines() if title in line and f"[#{pr}]" in line]
    assert lines, f"{words!r} is not in {log}"
    return lines[0]


@lru_cache(maxsize=None)
def _diff(old: str, new: str) -> tuple[Change, ...]:
    return tuple(diff_releases(load_release(ACP / old), load_release(ACP / new)))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[1].split(' (#')[0]}:{c[7]}" for c in CASES])
def test_changelog_line_is_reported(case: tuple) -> None:  # type: ignore[type-arg]
    log, words, old, new, file, rule, level, subject, variant, breaks = case
    changelog_line(log, words)
    found = [c for c in _diff(old, new) if (c.file, c.rule, c.subject, c.variant) == (file, rule, subject, variant)]
    assert found, f"no {rule} {subject} in {file} between {old} and {new}"
    assert len(found) == 1, found
    assert (found[0].kind, found[0].level, found[0].breaks) == (BY_ID[rule].kind, level, breaks)


def test_annotation_only_release_reports_nothing_on_v1() -> None:
    """schema-v1.19.1: 'remove enum discriminators from invalid schemas (#1612)' changed
    only annotations in the v1 files: no record at all."""
    changelog_line(V1, "remove enum discriminators from invalid schemas (#1612")
    assert [c for c in _diff("schema-v1.19.0", "schema-v1.19.1") if c.file.startswith("v1/")] == []


def test_semantic_string_aliases_change_no_member() -> None:
    """schema-v2 alpha.1: 'add v2 semantic string types (#1742)' replaced plain strings by
    ``$ref``s to string aliases: each new alias is a def-added, no member changed type."""
    changelog_line(V2, "add v2 semantic string types (#1742")
    changes = _diff("schema-v1.19.0", "schema-v1.19.1")
    v2 = [c for c in changes if c.file == S2]
    assert not [c for c in v2 if c.kind == "type-changed"], [c.subject for c in v2 if c.kind == "type-changed"]
    added = {c.subject: c for c in v2 if c.rule == "def-added"}
    assert {"AbsolutePath", "MediaType"} <= set(added)
    assert {(added[k].kind, added[k].level, added[k].breaks) for k in ("AbsolutePath", "MediaType")} == {("def-added", "info", ())}


def test_there_are_at_least_twenty_cases() -> None:
    assert len(CASES) >= 20
