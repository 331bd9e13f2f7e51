"""ADR 0010: an import inside a function says why on its line (or on the comment line that
opens its block); any other import belongs at the top of its module."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("memory", "qualify", "karani_site")

pytestmark = pytest.mark.one_pass


def _in_block(line: str) -> bool:
    return not line.strip() or line.strip().startswith(("import ", "from ", ")"))


def _unexplained(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    found = []
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            # Its own line, or the block of imports it sits in and the comment above them.
            above = node.lineno - 1
            while above > 0 and _in_block(lines[above - 1]):
                above -= 1
            block = lines[above - 1 : node.lineno] if above > 0 else lines[: node.lineno]
            if not any("#" in line for line in block):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_import_inside_a_function_says_why():
    paths = [
        path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]
    assert [hit for path in paths for hit in _unexplained(path)] == []
