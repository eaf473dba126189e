"""Every corpus record whose level (or rule) #25 or the data-flow gates of #37 changed,
each with the reason: the corpus pair, the record it must now be, and why. A record not
listed here keeps the level it had (the counts are in docs/reference/diff.md, In the corpus)."""

from __future__ import annotations

from functools import lru_cache

import pytest

from acpgen.api import load_release
from acpgen.diff import Change, diff_releases
from acpgen.diff.rules import BY_ID
from tests.corpus import ACP, needs_corpus

pytestmark = needs_corpus
S1, U1, S2, U2 = "v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"
A, C, AC = ("agent",), ("client",), ("agent", "client")
INFO_NO_BREAKS = "gated before too; an info record breaks nobody"

#: (old, new, file, rule, level, subject, variant, breaks, why it is this level now)
MOVED = [
    # family 1: an untagged member gains its tag
    ("v0.13.5", "schema-v1.13.7", U2, "field-now-required", "error", "McpServer.type", "stdio", C, "old clients send stdio servers without `type`"),
    ("v0.13.5", "schema-v1.13.7", U2, "field-now-required", "error", "AuthMethod.type", "agent", A, "old agents send agent auth methods without `type`; its `not` guard moved into the tag"),
    # family 2: stabilised into a closed union, or an ungated request
    ("v0.10.7", "v0.11.1", S1, "moved-to-stable-breaking", "error", "SessionUpdate", "config_option_update", C, "closed SessionUpdate, no gate: old stable clients reject it"),
    ("v0.10.7", "v0.11.1", S1, "moved-to-stable-breaking", "error", "SessionUpdate", "session_info_update", C, "closed SessionUpdate, no gate: old stable clients reject it"),
    ("v0.13.5", "schema-v1.13.7", S1, "moved-to-stable-breaking", "error", "SessionUpdate", "usage_update", C, "closed SessionUpdate, no gate (also a changelog line)"),
    # family 3: the shape still accepts the old one; its tagged members are variants
    ("v0.10.7", "v0.11.1", U1, "variant-added-closed", "error", "SetSessionConfigOptionRequest", "boolean", A, "the old object's `value` is a string: a boolean value is rejected"),
    ("v0.10.7", "v0.11.1", U1, "variant-added-closed", "info", "AuthMethod", "terminal", (), "gated by the new capability `AuthCapabilities.terminal`"),
    ("v0.10.7", "v0.11.1", U1, "variant-added-open", "info", "AuthMethod", "env_var", (), "the old AuthMethod object accepts its payload"),
    ("schema-v1.16.0", "schema-v1.19.0", U2, "variant-added-open", "info", "SetSessionConfigOptionRequest", "id", (), "the old untagged default (value_id) accepts its payload"),
    ("schema-v1.16.0", "schema-v1.19.0", S1, "moved-to-stable", "info", "SetSessionConfigOptionRequest", "boolean", (), "compared as variants now; gated by `SessionConfigOptionsCapabilities.boolean`"),
    ("schema-v1.20.0", "main", S1, "moved-to-stable", "info", "AuthMethod", "terminal", (), "compared as variants now; gated by `AuthCapabilities.terminal`"),
    ("v0.2.0-alpha.6", "v0.2.0-alpha.8", S1, "variant-added-closed", "info", "McpServer", "http", (), "compared as variants now; gated by `mcpCapabilities.http`"),
    ("v0.2.0-alpha.6", "v0.2.0-alpha.8", S1, "variant-added-closed", "info", "McpServer", "sse", (), "compared as variants now; gated by `mcpCapabilities.sse`"),
    # family 4: the gate named in the capability's own description
    ("v0.0.13", "v0.0.14", S1, "method-added", "info", "session/load", None, (), "`loadSession`: \"Agent supports `session/load`\""),
    ("v0.10.7", "v0.11.1", U1, "method-added", "info", "session/close", None, (), "`SessionCapabilities.stop`: \"Whether the agent supports `session/close`\""),
    ("v0.13.3", "v0.13.4", U1, "variant-added-closed", "info", "SessionUpdate", "plan_update", (), "`planCapabilities`: \"supports `plan_update` and `plan_removed`\""),
    ("v0.13.3", "v0.13.4", U1, "variant-added-closed", "info", "SessionUpdate", "plan_removed", (), "`planCapabilities`: \"supports `plan_update` and `plan_removed`\""),
    ("v0.13.3", "v0.13.4", U2, "variant-added-closed", "info", "SessionUpdate", "plan_update", (), "`planCapabilities`: \"supports `plan_update` and `plan_removed`\""),
    ("v0.13.3", "v0.13.4", U2, "variant-added-closed", "info", "SessionUpdate", "plan_removed", (), "`planCapabilities`: \"supports `plan_update` and `plan_removed`\""),
    ("v0.13.5", "schema-v1.13.7", U2, "capability-gate-removed", "warning", "AgentCapabilities.sessionCapabilities", None, A, "the `sessionCapabilities.list` (...) methods stay: now mandatory"),
    # family 5: removed together with the gate
    ("schema-v1.16.0", "schema-v1.19.0", S2, "method-removed", "info", "session/load", None, (), "`SessionCapabilities.load` went with it"),
    ("schema-v1.16.0", "schema-v1.19.0", U2, "method-removed", "info", "session/load", None, (), "`SessionCapabilities.load` went with it"),
    ("v0.13.5", "schema-v1.13.7", U2, "method-removed", "info", "fs/read_text_file", None, (), "`FileSystemCapabilities.readTextFile` went with it"),
    ("v0.13.5", "schema-v1.13.7", U2, "method-removed", "info", "fs/write_text_file", None, (), "`FileSystemCapabilities.writeTextFile` went with it"),
    ("v0.13.5", "schema-v1.13.7", U2, "variant-removed-open", "info", "McpServer", "sse", (), "`McpCapabilities.sse` went with it"),
    # data-flow gates: a required identifier the caller receives only inside an optional
    # member (or a union variant) of what the other side sends, new with the request
    ("v0.2.0-alpha.6", "v0.2.0-alpha.8", S1, "method-added", "info", "session/set_mode", None, (), "`SessionModeId` only in the new optional `modes` of the session responses (and the new `current_mode_update`)"),
    ("v0.2.1", "v0.4.1", S1, "method-added", "info", "session/set_model", None, (), "`ModelId` only in the new optional `models` of the session responses"),
    ("v0.10.3", "v0.10.6", U1, "method-added", "info", "session/set_config_option", None, (), "`SessionConfigId` only in the new optional `configOptions` (and the new `config_option_update`)"),
    ("v0.10.7", "v0.11.1", S1, "moved-to-stable", "info", "session/set_config_option", None, (), "was moved-to-stable-breaking warning; stabilised with `configOptions` and `config_option_update`, its only sources of `SessionConfigId`"),
    ("v0.12.2", "v0.13.0", U1, "method-added", "info", "mcp/connect", None, (), "the agent learns a `McpServerAcpId` only from the client's new `acp` McpServer variant"),
    # ... and removed with it: no new peer sends the gate, no old caller calls the method
    ("v0.13.4", "v0.13.5", U1, "method-removed", "info", "session/set_model", None, (), "removed with `models`, its only source of `ModelId` (also a changelog line)"),
    ("v0.13.4", "v0.13.5", U2, "method-removed", "info", "session/set_model", None, (), "removed with `models`, its only source of `ModelId`"),
    ("v0.13.4", "v0.13.5", U2, "method-removed", "info", "session/set_mode", None, (), "removed with `modes` and `current_mode_update`, its only sources of `SessionModeId`"),
    # family 7: optional members renamed in open objects
    ("v0.0.17", "v0.0.19", S1, "field-renamed", "warning", "ToolCallUpdate.label -> ToolCallUpdate.title", None, AC, "optional, open object: both payloads stay valid"),
    ("v0.6.0", "v0.6.2", S1, "field-renamed", "warning", "SetSessionModeResponse.meta -> SetSessionModeResponse._meta", None, C, "optional, open object"),
    ("v0.11.1", "v0.11.3", U1, "field-renamed", "warning", "SessionCapabilities.stop -> SessionCapabilities.close", None, C, "optional, open object"),
    ("v0.13.5", "schema-v1.13.7", U1, "field-renamed", "warning", "ClientCapabilities.planCapabilities -> ClientCapabilities.plan", None, A, "optional, open object (also a changelog line)"),
    ("v0.13.5", "schema-v1.13.7", U2, "field-renamed", "warning", "InitializeRequest.clientCapabilities -> InitializeRequest.capabilities", None, A, "optional, open object"),
    ("v0.13.5", "schema-v1.13.7", U2, "field-renamed", "warning", "InitializeResponse.agentCapabilities -> InitializeResponse.capabilities", None, C, "optional, open object"),
    # family 8: removed, and the untagged default still accepts the payload
    ("schema-v1.20.0", "main", U1, "variant-removed-open", "warning", "AuthMethod", "env_var", A, "the untagged default `agent` accepts `env_var` payloads"),
    # smaller: an info record breaks nobody
    ("v0.0.33", "v0.1.3-alpha.0", S1, "variant-added-closed", "info", "ToolCallContent", "terminal", (), INFO_NO_BREAKS),
    ("v0.12.2", "v0.13.0", U1, "variant-added-closed", "info", "McpServer", "acp", (), INFO_NO_BREAKS),
    ("schema-v1.20.0", "main", U1, "variant-added-closed", "info", "SessionUpdate", "compaction_update", (), INFO_NO_BREAKS),
    ("schema-v1.20.0", "main", U1, "variant-added-closed", "info", "SessionUpdate", "compaction_summary_chunk", (), INFO_NO_BREAKS),
]

#: (old, new, file, rule, subject): records #25 no longer gives, and why
GONE = [
    ("v0.10.7", "v0.11.1", S1, "def-kind-changed", "AuthMethod", "a union whose untagged default holds the old object"),
    ("v0.10.7", "v0.11.1", U1, "def-kind-changed", "AuthMethod", "a union whose untagged default holds the old object"),
    ("v0.10.7", "v0.11.1", U1, "def-kind-changed", "SetSessionConfigOptionRequest", "a union whose default holds the old object"),
    ("schema-v1.16.0", "schema-v1.19.0", S1, "def-kind-changed", "SetSessionConfigOptionRequest", "a union whose default holds the old object"),
    ("schema-v1.20.0", "main", S1, "def-kind-changed", "AuthMethod", "a union whose untagged default holds the old object"),
    ("v0.2.0-alpha.6", "v0.2.0-alpha.8", S1, "def-kind-changed", "McpServer", "a union whose untagged default holds the old object"),
    ("v0.13.5", "schema-v1.13.7", U2, "type-widened", "AuthMethodAgent", "its `not` guard moved into the `agent` tag"),
]


@lru_cache(maxsize=None)
def _diff(old: str, new: str) -> tuple[Change, ...]:
    return tuple(diff_releases(load_release(ACP / old), load_release(ACP / new)))


@pytest.mark.parametrize("case", MOVED, ids=[f"{c[0]}..{c[1]}:{c[5]}:{c[6]}" for c in MOVED])
def test_a_record_that_moved_is_at_its_new_level(case: tuple) -> None:  # type: ignore[type-arg]
    old, new, file, rule, level, subject, variant, breaks, why = case
    found = [c for c in _diff(old, new) if (c.file, c.subject, c.variant) == (file, subject, variant) and c.kind == BY_ID[rule].kind]
    assert [(c.rule, c.level, c.breaks) for c in found] == [(rule, level, breaks)], why
    assert level == BY_ID[rule].level or found[0].note, "a level below the rule's says why"


@pytest.mark.parametrize("case", GONE, ids=[f"{c[0]}..{c[1]}:{c[4]}" for c in GONE])
def test_a_record_that_went_is_gone(case: tuple) -> None:  # type: ignore[type-arg]
    old, new, file, rule, subject, why = case
    assert not [c for c in _diff(old, new) if (c.file, c.rule, c.subject) == (file, rule, subject)], why


#: (old, new, file, subject, what the note must name: the gating members, the type, the identifier)
DATA_GATES = [
    ("v0.2.1", "v0.4.1", S1, "session/set_model", ("`NewSessionResponse.models` (through `SessionModelState`)", "`ModelId` its `modelId`")),
    ("v0.10.7", "v0.11.1", S1, "session/set_config_option", ("`NewSessionResponse.configOptions` (through `SessionConfigOption`)", "`SessionUpdate` variant `config_option_update`", "`SessionConfigId` its `configId`")),
    ("v0.13.4", "v0.13.5", U2, "session/set_mode", ("its gate, ", "`NewSessionResponse.modes` (through `SessionModeState`)", "`SessionUpdate` variant `current_mode_update`", "went with it")),
]


@pytest.mark.parametrize("case", DATA_GATES, ids=[f"{c[0]}..{c[1]}:{c[3]}" for c in DATA_GATES])
def test_a_data_gate_names_its_member_and_type(case: tuple) -> None:  # type: ignore[type-arg]
    old, new, file, subject, names = case
    (found,) = [c for c in _diff(old, new) if (c.file, c.subject) == (file, subject)]
    assert found.note and all(n in found.note for n in names), found.note
    assert dict(found.why)["gate"] == found.note
