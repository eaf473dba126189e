from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpgen import ir
from acpgen.normalise import build_protocol
from acpgen.errors import AcpgenError
from acpgen.load import load_file
from acpgen.config import load_config
from acpgen.naming import Override, attribute_name, decide, pascal, snake, unused_overrides

from .conftest import SCHEMAS, generate, import_file, parse_as


def protocol(path: Path) -> ir.Protocol:
    return build_protocol(load_file(path))


def test_pascal_and_snake() -> None:
    assert pascal("user_message_chunk") == "UserMessageChunk"
    assert pascal("_acme_widget") == "AcmeWidget"
    assert pascal("2.0") == "V20"
    assert snake("sessionUpdate") == "session_update"
    assert snake("_meta") == "meta"
    assert snake("mimeType") == "mime_type"
    assert snake("URLMode") == "url_mode"


@pytest.mark.parametrize(
    ("wire", "attr"),
    [("class", "class_"), ("import", "import_"), ("list", "list_"), ("type", "type_"),
     ("copy", "copy_"), ("id", "id"), ("format", "format"), ("input", "input"), ("range", "range"),
     ("modelId", "model_id_"), ("_meta", "meta")],
)
def test_attribute_names(wire: str, attr: str) -> None:
    assert attribute_name(wire) == attr


def test_variant_names_come_from_tags() -> None:
    names = decide(protocol(SCHEMAS / "tagged_union.json"))
    assert names.type("ContentBlock#text") == "TextContentBlock"
    assert names.type("ContentBlock#image") == "ImageContentBlock"
    assert names.type("Update#user_message_chunk") == "UserMessageChunkUpdate"
    assert names.type("Update#agent_message_chunk") == "AgentMessageChunkUpdate"


def test_default_and_fallback_names_come_from_titles() -> None:
    names = decide(protocol(SCHEMAS / "default_member.json"))
    assert names.type("SetOption#default") == "ValueIdSetOption"
    open_names = decide(protocol(SCHEMAS / "open_union.json"))
    assert open_names.type("ToolCallContent#fallback") == "OtherToolCallContent"


def test_untitled_untagged_members_named_from_their_own_properties() -> None:
    names = decide(protocol(SCHEMAS / "untagged_union.json"))
    assert names.type("Chunk.text") == "ChunkText"
    assert names.type("Chunk.thought") == "ChunkThought"


def test_variant_named_like_its_payload_gets_variant_suffix(tmp_path: Path) -> None:
    schema = {
        "$defs": {
            "StateUpdate": {"anyOf": [{"type": "object", "properties": {"state": {"const": "running"}},
                                       "required": ["state"], "allOf": [{"$ref": "#/$defs/RunningStateUpdate"}]}]},
            "RunningStateUpdate": {"type": "object", "properties": {}},
        }
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    names = decide(protocol(path))
    assert names.type("StateUpdate#running") == "RunningStateUpdateVariant"


def test_nested_variants_named_from_both_tags() -> None:
    """A variant whose payload is a tagged union: one class per inner variant, the inner
    prefix on the outer variant's name; the members of each get attribute names."""
    p = protocol(SCHEMAS / "nested_union.json")
    names = decide(p)
    assert names.type("Update#state") == "StateUpdate"
    assert names.type("Update#state#running") == "RunningStateUpdate"
    assert names.type("Update#state#idle") == "IdleStateUpdate"
    assert names.type("Update#state#fallback") == "OtherStateUpdate"
    assert names.attr("Update#state#running", "task") == "task"
    assert names.attr("Update#state#running", "kind") == "kind"
    assert [n.key for n in ir.all_nested_variants(p)] == ["Update#state#running", "Update#state#idle", "Update#state#fallback"]


def test_nested_variant_clash_points_at_both(tmp_path: Path) -> None:
    schema = json.loads((SCHEMAS / "nested_union.json").read_text())
    schema["$defs"]["RunningStateUpdate"] = {"type": "object", "properties": {}}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(AcpgenError) as exc:
        decide(protocol(path))
    (d,) = exc.value.diagnostics
    assert "'RunningStateUpdate'" in d.message and "/$defs/RunningStateUpdate" in d.message and "/$defs/Update/oneOf/1" in d.message


def test_clash_is_an_error_naming_both_sources(tmp_path: Path) -> None:
    schema = {
        "$defs": {
            "ContentBlock": {"oneOf": [{"type": "object", "properties": {"type": {"const": "text"}},
                                        "required": ["type"]}]},
            "TextContentBlock": {"type": "object", "properties": {}},
        }
    }
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(AcpgenError) as exc:
        decide(protocol(path))
    (d,) = exc.value.diagnostics
    assert d.code == "ACPG301"
    assert "/$defs/ContentBlock/oneOf/0" in d.message and "/$defs/TextContentBlock" in d.message


def test_snake_case_clash_inside_one_class(tmp_path: Path) -> None:
    schema = {"$defs": {"X": {"type": "object", "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}}}}}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(AcpgenError) as exc:
        decide(protocol(path))
    assert "'fooBar' and 'foo_bar'" in exc.value.diagnostics[0].message


def test_override_resolves_a_clash(tmp_path: Path) -> None:
    schema = {"$defs": {"X": {"type": "object", "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}}}}}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    names = decide(protocol(path), {"X.foo_bar": Override("foo_bar_raw", "both spellings are on the wire")})
    assert names.attr("X", "foo_bar") == "foo_bar_raw"
    assert names.attr("X", "fooBar") == "foo_bar"


def _methods_protocol(tmp_path: Path, defs: dict[str, object]) -> ir.Protocol:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"$defs": defs}))
    return protocol(path)


def _obj(method: str, side: str = "agent") -> dict[str, object]:
    return {"type": "object", "properties": {}, "x-method": method, "x-side": side}


def test_handler_names_from_wire_methods(tmp_path: Path) -> None:
    p = _methods_protocol(
        tmp_path,
        {
            "McpMessageRequest": _obj("mcp/message", "agent"),
            "McpMessageResponse": _obj("mcp/message", "agent"),
            "McpMessageNotification": _obj("mcp/message", "client"),
            "CancelRequestNotification": _obj("$/cancel_request", "protocol"),
            "TwoFactorRequest": _obj("2fa/check"),
            "ImportRequest": _obj("import"),
        },
    )
    names = decide(p)
    assert names.handler("mcp/message", "request") == "mcp_message"
    assert names.handler("mcp/message", "notification") == "mcp_message_notification"
    assert names.handler("$/cancel_request", "notification") == "cancel_request"
    assert names.handler("2fa/check", "request") == "n2fa_check"
    assert names.handler("import", "request") == "import_"


def test_handler_clash_is_an_error_naming_both(tmp_path: Path) -> None:
    p = _methods_protocol(tmp_path, {"ARequest": _obj("session/new"), "BRequest": _obj("session.new"), "CRequest": _obj("extension/request")})
    with pytest.raises(AcpgenError) as err:
        decide(p)
    text = str(err.value)
    assert "'session.new'" in text and "'session/new'" in text and "ACPG301" in text
    assert "extension_request" in text  # the name the interfaces keep for extension methods
    fixed = decide(p, {"method:session.new": Override("session_new_dotted", "the dotted form is a vendor alias"), "method:extension/request": Override("extension_req", "reserved")})
    assert fixed.handler("session.new", "request") == "session_new_dotted"


@pytest.mark.parametrize(
    ("key", "name"),
    [("None", "None_"), ("True", "True_"), ("False", "False_"), ("class", "Class"), ("import", "Import"),
     ("match", "match"), ("Session", "Session")],
)
def test_a_def_key_that_is_a_keyword_is_never_a_class_name(tmp_path: Path, key: str, name: str) -> None:
    """A `$defs` key is the class name when it is a usable identifier; a keyword is not
    (`class None(...)` cannot be imported): `class` is PascalCased like any other key that
    is not an identifier, and `None`, `True`, `False`, already PascalCase, get the trailing
    underscore the attributes get. A soft keyword (`match`) is an identifier."""
    p = _methods_protocol(tmp_path, {key: {"type": "object", "properties": {"a": {"type": "string"}}}})
    assert decide(p).type(key) == name


def test_keyword_defs_build_importable_modules_in_every_style(tmp_path: Path) -> None:
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir()
    holder = {"type": "object", "properties": {k: {"$ref": f"#/$defs/{k}"} for k in ("None", "True", "class")}}
    defs = {k: {"type": "object", "properties": {"a": {"type": "string"}}} for k in ("None", "True", "class")}
    schema.write_text(json.dumps({"$defs": {**defs, "Holder": holder}}))
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses", "typeddict"))
    for style in ("pydantic", "dataclasses", "typeddict"):
        m = import_file(out / f"acp_{style}" / "v1.py")
        assert {"None_", "True_", "Class"} <= set(vars(m)), style
        data = {"None": {"a": "x"}, "True": {"a": "y"}, "class": {"a": "z"}}
        assert parse_as(style, m, "Holder", data) == (True, data), style


def test_a_keyword_naming_override_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "acpgen.toml"
    config.write_text('[[target]]\nschema = "s.json"\nout = "o"\n[naming]\n"X" = { name = "None", reason = "r" }\n"Y" = { name = "class", reason = "r" }\n')
    with pytest.raises(AcpgenError) as exc:
        load_config(config, ("pydantic",))
    assert [(d.code, d.pointer) for d in exc.value.diagnostics] == [("ACPG302", "/naming/X"), ("ACPG302", "/naming/Y")]


def test_a_naming_override_renames_a_notification_handler(tmp_path: Path) -> None:
    p = _methods_protocol(
        tmp_path,
        {
            "CancelNotification": _obj("session/cancel", "agent"),
            "McpMessageRequest": _obj("mcp/message", "agent"),
            "McpMessageResponse": _obj("mcp/message", "agent"),
            "McpMessageNotification": _obj("mcp/message", "client"),
        },
    )
    overrides = {
        "method:session/cancel:notification": Override("cancel_session", "reads better"),
        "method:mcp/message:notification": Override("mcp_message_event", "the notification is an event"),
    }
    names = decide(p, overrides)
    assert names.handler("session/cancel", "notification") == "cancel_session"
    assert names.handler("mcp/message", "notification") == "mcp_message_event"
    assert names.handler("mcp/message", "request") == "mcp_message"  # the request's key is its own
    assert unused_overrides(overrides, [p]) == []
    # the request's override does not rename the notification of the same wire name
    only_request = decide(p, {"method:mcp/message": Override("mcp_call", "r")})
    assert only_request.handler("mcp/message", "request") == "mcp_call"
    assert only_request.handler("mcp/message", "notification") == "mcp_message_notification"


def test_a_def_key_that_gives_no_name_is_an_error_pointing_at_it(tmp_path: Path) -> None:
    """A key with no letter or digit (`---`) has no PascalCase form: an empty class name
    once went through (`class (AcpBaseModel):`, exit 0); now it is ACPG303 at the def, and
    a [naming] override names it."""
    p = _methods_protocol(tmp_path, {"---": {"type": "object", "properties": {}}, "Ok": {"type": "object", "properties": {}}})
    with pytest.raises(AcpgenError) as exc:
        decide(p)
    assert [(d.code, d.pointer) for d in exc.value.diagnostics] == [("ACPG303", "/$defs/---")]
    assert "[naming] override" in exc.value.diagnostics[0].message
    assert decide(p, {"---": Override("Dashes", "the key has no letters")}).type("---") == "Dashes"


def test_a_def_key_that_gives_no_name_fails_the_build_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from acpgen.cli import app

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"---": {"type": "object", "properties": {}}}}))
    result = CliRunner().invoke(app, ["build", "--schema", str(schema), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    (line,) = result.stderr.splitlines()
    assert line.endswith("ACPG303 /$defs/---: the def key '---' gives no Python name; add a [naming] override with a reason")
