"""bench/ runs without sys.path edits (issue 44): its scripts are modules of the ``bench``
package (``python -m bench.<name>`` from the repository root) and the helpers they share live
in ``bench.support``, so every import is an ordinary absolute one.

Imports only; no benchmark runs here (speed is measured by the scripts, never in tests).
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.one_pass

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
FILES = sorted(BENCH.rglob("*.py"))


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_bench_has_scripts_and_a_support_package():
    assert (BENCH / "__init__.py").is_file() and (BENCH / "support" / "__init__.py").is_file()
    scripts = [p for p in BENCH.glob("*.py") if p.name != "__init__.py"]
    assert scripts and all('__name__ == "__main__"' in p.read_text() for p in scripts), (
        "a file directly in bench/ is a runnable script; shared helpers go in bench/support/"
    )


def test_no_bench_file_edits_sys_path():
    editing = [str(p.relative_to(REPO)) for p in FILES if "sys.path" in p.read_text()]
    assert editing == []


def test_no_bench_file_imports_a_sibling_by_its_bare_name():
    # A bare `import ledgergen` only works with bench/ itself on sys.path.
    stems = {p.stem for p in FILES} - {"__init__"}
    bare = []
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            bare += [f"{path.name}: {n}" for n in names if n.split(".")[0] in stems]
    assert bare == []


_IMPORT_ALL = """
import ast, importlib, importlib.util, sys
from pathlib import Path

import django

django.setup()
before = list(sys.path)
failed = []
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {error!r}")
if sys.path != before:
    failed.append(f"importing bench changed sys.path: {sys.path[:3]}")
# Imports inside functions run only in a real bench; resolve the project's own ones here.
for path in Path(sys.argv[1]).rglob("*.py"):
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0):
            continue
        if node.module.split(".")[0] not in ("bench", "tests"):
            continue
        try:
            module = importlib.import_module(node.module)
        except Exception as error:
            failed.append(f"{path.name}: {node.module}: {error!r}")
            continue
        for alias in node.names:
            whole = f"{node.module}.{alias.name}"
            if not hasattr(module, alias.name) and importlib.util.find_spec(whole) is None:
                failed.append(f"{path.name}: {whole} not found")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_bench_module_imports_with_only_the_repository_on_the_path(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "karani_site.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}",
    }
    modules = [_module(p) for p in FILES]
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, str(BENCH), *modules],
        cwd=tmp_path,  # not the repository: only PYTHONPATH may find bench
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
