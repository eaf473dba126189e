"""acpgen.layout lays out Python the way black would, so that black rarely runs.

The contract: every module acpgen writes is a fixed point of black (``black --check``
clean). These tests hold it on hand-written statements of each shape the layout handles
(where the result must also be exactly what black makes of the raw line), on every fixture
in every Python style, on the bundled output, and on a sample of upstream releases.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import black
import pytest
from hypothesis import given
from hypothesis import strategies as st
from black.mode import TargetVersion

from acpgen import api
from acpgen.config import single_target
from acpgen.format import format_python
from acpgen.layout import lay_out, py_str

from .conftest import SCHEMAS
from .corpus import ACP, needs_corpus

MODE = black.Mode(target_versions={TargetVersion.PY311}, line_length=88)
ROOT = Path(__file__).resolve().parent.parent
D = "Whether the agent supports the method, and what it means when it is not supported at all."

#: one long statement per shape the layout splits itself (all wider than 88 columns)
SHAPES = {
    "call fits on its own line": 'class A:\n    session_id: SessionId = Field(alias="sessionId", description="The session ID of it.")\n',
    "call exploded": f'class A:\n    session_id: SessionId = Field(alias="sessionId", description="{D}")\n',
    "one long argument": f'class A:\n    text: str = Field(description="{D}")\n',
    "value in parentheses": 'class A:\n    position_encoding: Annotated[PositionEncodingKind | None, _OnErrorDefault(None)] = Field(default=None, alias="positionEncoding", description="x")\n',
    "value in parentheses, exploded": f'class A:\n    position_encoding: Annotated[PositionEncodingKind | None, _OnErrorDefault(None)] = Field(default=None, alias="positionEncoding", description="{D}")\n',
    "annotation split, value fits after it": 'class A:\n    recent_files: Annotated[NesRecentFilesCapabilities | None, _OnErrorDefault(None)] = Field(default=None, description="x")\n',
    "annotation split, value exploded": f'class A:\n    additional_directories: Annotated[Annotated[list[Annotated[str, _SKIP_INVALID]] | None, _NON_NULL], _OnErrorDefault(None)] = Field(default=None, alias="additionalDirectories", description="{D}")\n',
    "union annotation, short value": 'class A:\n    params: SessionNotification | CompleteElicitationNotification | MessageMcpNotification | None = Field(default=None, description="Params.")\n',
    "union annotation, one operand per line": "class A:\n    params: SessionNotification | CompleteElicitationNotification | MessageMcpNotification | ExtNotification | ExtRequest | None = None\n",
    "NotRequired string": 'class A(TypedDict):\n    additionalDirectories: NotRequired["Annotated[list[Annotated[str, _SKIP_INVALID]], _OnErrorDefault(omit=True)]"]\n',
    "bare string annotation too long for parentheses": 'class A(TypedDict):\n    entries: "Annotated[list[Annotated[PlanEntry, _SKIP_INVALID]], _OnErrorDefault(factory=list, required=True)]"\n',
    "bare string annotation": 'class A(TypedDict):\n    version: "Annotated[int, _Constraints(ge=-9223372036854775808, le=9223372036854775807)]"\n',
    "alias union in parentheses": 'CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"] | str\n',
    "alias union, one operand per line": "ContentBlock: TypeAlias = TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceLinkContentBlock | ResourceContentBlock\n",
    "alias Annotated with a long union": 'ContentBlock: TypeAlias = Annotated[TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceLinkContentBlock | ResourceContentBlock, Field(discriminator="type")]\n',
    "nested call in a dict entry": '_SPECS.update(\n    {\n        "ContentBlock": _Tagged("type", {"text": "TextContentBlock", "image": "ImageContentBlock", "audio": "AudioContentBlock"}, default=None, fallback=None),\n    }\n)\n',
    "annotation with keywords, call split": 'class A:\n    used: Annotated[int, Field(ge=0, le=18446744073709551615)] = Field(description="Tokens currently in context.")\n',
    "annotation with keywords and a string, call exploded": f'class A:\n    total_tokens: Annotated[int, Field(ge=0, le=18446744073709551615)] = Field(validation_alias="totalTokens", serialization_alias="totalTokens", description="{D}")\n',
    "a sole tuple argument in a dict entry": '_SPECS.update(\n    {\n        "ElicitationContentValue": _AnyOf((_STR, _Scalar((int,), "integer", ge=-9223372036854775808, le=9223372036854775807), _FLOAT, _BOOL, _List(_STR))),\n    }\n)\n',
    "a sole tuple argument that fits its own line": '_SPECS.update(\n    {\n        "ErrorCode": _AnyOf((_Lit((-32700, -32600, -32601, -32602)), _Scalar((int,), "integer", ge=-2147483648))),\n    }\n)\n',
    "a sole tuple argument of a statement": "UNION: Final = _AnyOf((_STR, _Scalar((int,), \"integer\", ge=-9223372036854775808, le=9223372036854775807), _FLOAT, _BOOL))\n",
    "a one-tuple in a split call": '_SPECS.update(\n    {\n        "ElicitationUrlMode": _Obj(ElicitationUrlMode, (_F("elicitation_id", "elicitationId", _Ref("ElicitationId"), required=True), _F("url", "url", _STR, required=True)), extra="allow", groups=(_Group("anyOf", (_Branch("Session", base=_Ref("ElicitationSessionScope")), _Branch("Request", base=_Ref("ElicitationRequestScope")))),)),\n    }\n)\n',
    "element of a split tuple": 'METHODS: Final[tuple[MethodSpec, ...]] = (\n    MethodSpec("session/set_config_option", "agent", "request", SetSessionConfigOptionRequest, SetSessionConfigOptionResponse),\n    MethodSpec("a", "agent", "request", A, B),\n)\n',
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shape_is_laid_out_as_black_does(shape: str) -> None:
    source = SHAPES[shape]
    assert any(len(line) > 88 for line in source.splitlines())
    laid = lay_out(source)
    assert laid.pending == (), "this shape should not need black"
    assert laid.text == black.format_str(source, mode=MODE)


def test_shapes_it_does_not_know_go_to_black(monkeypatch: pytest.MonkeyPatch) -> None:
    source = (
        "class A:\n"
        "    def method(self, source: Any, handler: GetCoreSchemaHandler, another_argument: int) -> CoreSchema:\n"
        "        return handler(source)\n"
        "\n"
        "\n"
        "value: int = some_function(argument_one) + other_function(argument_two) + third_function(argument_three)\n"
    )
    laid = lay_out(source)
    # a long def line sends its whole top-level statement (the class); an operator chain
    # only its own line
    assert [(p.start, p.end, p.indent) for p in laid.pending] == [(0, 5, 0), (5, 6, 0)]
    monkeypatch.setenv("ACPGEN_CACHE_DIR", "")
    assert format_python(PurePosixPath("m.py"), source) == black.format_str(source, mode=MODE)


@pytest.mark.parametrize(
    "value", ["plain", 'say "hi"', "it's", "both ' and \"\"", "back\\slash", "new\nline", "tab\t", "ünïcode", '"' * 3]
)
def test_py_str_is_what_black_writes(value: str) -> None:
    line = f"x = {py_str(value)}\n"
    assert black.format_str(line, mode=MODE) == line
    assert eval(py_str(value)) == value


def _python_outputs(schema: Path, tmp: Path) -> dict[PurePosixPath, str]:
    config = single_target(schema, tmp / "out", ("pydantic", "dataclasses", "typeddict"))
    [(_, files)] = api.render_all(config)
    return {p: t for p, t in files.items() if p.suffix == ".py"}


def _assert_black_stable(files: dict[PurePosixPath, str]) -> None:
    unstable = [str(p) for p, text in sorted(files.items()) if black.format_str(text, mode=MODE) != text]
    assert not unstable, f"not black-clean: {unstable}"


FIXTURES = sorted([p.name for p in SCHEMAS.glob("*.json")] + [p.name for p in SCHEMAS.iterdir() if p.is_dir()])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_modules_are_black_stable(fixture: str, tmp_path: Path) -> None:
    _assert_black_stable(_python_outputs(SCHEMAS / fixture, tmp_path))


def test_bundled_output_is_black_stable() -> None:
    files = {PurePosixPath(p.relative_to(ROOT).as_posix()): p.read_text() for p in sorted((ROOT / "generated").rglob("*.py"))}
    assert files
    _assert_black_stable(files)


CORPUS_SAMPLE = ["v0.0.1/v1/schema.json", "v0.6.3", "schema-v1.13.7", "main"]


@needs_corpus
@pytest.mark.parametrize("release", CORPUS_SAMPLE)
def test_corpus_modules_are_black_stable(release: str, tmp_path: Path) -> None:
    schema = ACP / release
    files = _python_outputs(schema, tmp_path)
    assert files
    _assert_black_stable(files)


@needs_corpus
def test_black_is_rarely_needed_on_a_large_release(tmp_path: Path) -> None:
    """The layout, not black, places almost every statement of upstream main (a count, not
    a timing: each pending statement costs a black call on a cold cache)."""
    config = single_target(ACP / "main" / "v1" / "schema.unstable.json", tmp_path, ("pydantic", "dataclasses", "typeddict"))
    [(_, files)] = api.render_all(config, formatted=False)
    laid = [lay_out(t) for p, t in files.items() if p.suffix == ".py"]
    statements = sum(t.text.count("\n") for t in laid)
    pending = sum(len(t.pending) for t in laid)
    assert pending <= 80, f"{pending} statements of {statements} lines went to black"


def _mask_by_char(s: str) -> str:
    """The definition of ``_mask``, one character at a time (its first version, kept here as
    the oracle of the one-pass version)."""
    from acpgen.layout import _TOKEN

    out = list(s)
    for m in _TOKEN.finditer(s):
        if m.group() not in "()[]{}":
            out[m.start() : m.end()] = "\0" * (m.end() - m.start())
    depth = 0
    for i, c in enumerate(out):
        if c in ")]}":
            depth -= 1
        inner = depth > 0
        if c in "([{":
            depth += 1
        if inner:
            out[i] = "\0"
    return "".join(out)


_MASK_ALPHABET = st.sampled_from(list("ab_ ,:|=.()[]{}\"'\\#\n") + ['"""', "'''", 'r"', "x: int", "Field(", ")"])


@given(st.lists(_MASK_ALPHABET, max_size=40).map("".join))
def test_mask_blanks_strings_and_bracket_contents(text: str) -> None:
    from acpgen.layout import _mask

    assert _mask(text) == _mask_by_char(text)


def test_mask_on_statements_it_lays_out() -> None:
    from acpgen.layout import _mask

    for text in (
        'x: Annotated[list[Foo] | None, _NON_NULL] = Field(default=None, description="a (b) [c]")',
        "Foo | Bar | Literal['x', \"y\"]",
        "f(a, (b, c), [d], {e: f})) ] extra",
        '"""doc (with) brackets""" + g(h)',
    ):
        assert _mask(text) == _mask_by_char(text)
        assert len(_mask(text)) == len(text)
