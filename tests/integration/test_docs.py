"""Every ```python block in docs/*.md (and README.md) runs, so the docs cannot rot.

Per document, the blocks run in order in one namespace (a later block may use
an earlier block's names), with the working directory a temp folder, the
plugin registry restored and x64 reset afterwards. Blocks fenced as anything
else (```text, ```console, ```toml ...) are not run. A failure names the
document, the block and the line in the .md file; tracebacks point into the
document, because each block is compiled with its own line offset.
"""
from __future__ import annotations

import pathlib
import re
import sys
import types
import traceback
from dataclasses import dataclass

import pytest

import plugax
from plugax.testing import registry_restored

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)[^\n]*$")


@dataclass
class Block:
    language: str
    line: int        # 1-based line of the first code line in the .md file
    source: str


def code_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, with their info-string language."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, language = opening.groups()
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        blocks.append(Block(language.lower(), i + 2, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def run_document(path: pathlib.Path) -> int:
    """Run the python blocks of one document; return how many ran.

    The blocks run in a module of their own, registered in sys.modules while they
    run, as a script's would be (dataclasses look their module up there)."""
    module = types.ModuleType(f"docs_{path.stem.replace('-', '_')}")
    sys.modules[module.__name__] = module
    try:
        return _run_blocks(path, module.__dict__)
    finally:
        sys.modules.pop(module.__name__, None)


def _run_blocks(path: pathlib.Path, namespace: dict) -> int:
    blocks = [b for b in code_blocks(path.read_text(encoding="utf-8")) if b.language == "python"]
    for n, block in enumerate(blocks, 1):
        code = compile("\n" * (block.line - 1) + block.source, str(path), "exec")
        try:
            exec(code, namespace)
        except Exception as err:
            where = traceback.extract_tb(err.__traceback__)
            lines = [f.lineno for f in where if f.filename == str(path)]
            raise AssertionError(
                f"{path.relative_to(ROOT)}: python block {n} of {len(blocks)} (starting at "
                f"line {block.line}) raised {type(err).__name__} at line "
                f"{lines[-1] if lines else '?'}: {err}\n\n{block.source}") from err
    return len(blocks)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x64 = plugax.config.enable_x64
    try:
        with registry_restored():
            run_document(path)
    finally:
        plugax.config.update("enable_x64", x64)


def test_block_parser_and_runner(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n```python\nx = 1\n```\n```text\nnot python\n```\n"
                   "- item\n  ```python\n  y = x + 1\n  ```\n```console\n$ ls\n```\n"
                   "```python\nassert y == 3, 'y is 2'\n```\n")
    blocks = code_blocks(doc.read_text())
    assert [(b.language, b.line) for b in blocks] == [("python", 3), ("text", 6), ("python", 10),
                                                     ("console", 13), ("python", 16)]
    assert blocks[2].source == "y = x + 1\n"
    with pytest.raises(AssertionError) as info:
        _run_outside(doc)
    message = str(info.value)
    assert "python block 3 of 3 (starting at line 16)" in message
    assert "AssertionError at line 16: y is 2" in message


def _run_outside(path: pathlib.Path) -> None:
    """run_document for a file outside the repository (names it relative to its folder)."""
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        run_document(path)
    finally:
        ROOT = saved


def test_plugin_api_page_covers_every_hook_and_ruleset_field():
    import dataclasses
    import inspect as _inspect
    from plugax.loader import hookspec
    from plugax.core.rules import rule_kinds
    from plugax.loader.ruleset import PluginInfo, Transformation
    page = (ROOT / "docs" / "plugin-api.md").read_text(encoding="utf-8")
    hooks = [n for n, f in vars(hookspec).items() if n.startswith("plugax_") and callable(f)]
    fields = [f.name for cls in (PluginInfo, Transformation) for f in dataclasses.fields(cls)]
    fields += [*rule_kinds, "expand", "overrides", "primitive"]
    missing = [name for name in hooks + fields if f"`{name}" not in page]
    assert len(hooks) >= 5 and missing == [], f"docs/plugin-api.md does not mention {missing}"
    assert all(_inspect.getdoc(getattr(hookspec, h)) for h in hooks)
