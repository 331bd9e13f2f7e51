"""The credential screen before issue 30 (detect-secrets 1.5.0 plus hand patterns), read from
git history at bench time: bench/secrets_bench.py's same-run baseline. Not used by karani.

The screen is ``memory/credentials.py`` as it stood at BEFORE_ISSUE_30, the commit before
Kingfisher replaced detect-secrets; git holds it exactly, so the tree keeps no copy. It needs
the repository's history (not a shallow clone) and detect-secrets, a dev dependency.
"""

import importlib.util
import os
import subprocess
import tempfile
import types
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
BEFORE_ISSUE_30 = "a1be0faddae61583a014e9ae3a25e908f4bd9ac5"
SOURCE = f"{BEFORE_ISSUE_30}:memory/credentials.py"
# A commit's file never changes, so one copy under the temp dir serves every later run: the
# bench's cold starts then time the screen's own load, not a git process.
COPY = Path(tempfile.gettempdir()) / f"karani-credentials-{BEFORE_ISSUE_30[:12]}.py"


def _copy_from_git() -> None:
    shown = subprocess.run(
        ["git", "show", SOURCE], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if shown.returncode != 0:
        raise SystemExit(
            f"secrets_baseline: git cannot show {SOURCE} ({shown.stderr.strip()}); the baseline "
            "needs the repository's history (git fetch --unshallow)"
        )
    partial = COPY.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(shown.stdout, encoding="utf-8")
    partial.replace(COPY)  # atomic: a concurrent run never reads half a file


@cache
def _screen() -> types.ModuleType:
    if not COPY.is_file():
        _copy_from_git()
    spec = importlib.util.spec_from_file_location("secrets_baseline_screen", COPY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def __getattr__(name: str) -> Any:
    # Read on first use, so importing this module (tests/test_bench_layout.py) runs no git;
    # dunder look-ups are import machinery's and introspection's, never the screen's.
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_screen(), name)
