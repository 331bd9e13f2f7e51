"""Test-wide set-up shared by every test module (loaded before Django is configured)."""

import os
import tempfile

# Tests never touch a developer's ./var ledger or ~/.mem0; set before settings import.
os.environ.setdefault("KARANI_DATA_DIR", tempfile.mkdtemp(prefix="karani-test-"))
os.environ.setdefault("MEM0_TELEMETRY", "False")
