"""Issue 27: scripts/local-llm builds llama.cpp for any x86-64 machine with AVX2, not for the
build machine's own CPU (a native build died with SIGILL on a VM that reports AMX)."""

import platform
import subprocess

import pytest
from ledger_helpers import REPO, child_env

pytestmark = pytest.mark.one_pass

PORTABLE = ["-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON"]


def flags(**env: str | None) -> list[str]:
    proc = subprocess.run(
        [str(REPO / "scripts" / "local-llm"), "flags"],
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the portable flags are x86-64's")
def test_it_builds_for_avx2_without_native_cpu_flags():
    built = flags(CMAKE_ARGS=None)
    assert all(flag in built for flag in PORTABLE)
    assert not any("NATIVE=ON" in flag or "march=native" in flag for flag in built)


def test_the_callers_cmake_args_come_last_so_they_win():
    built = flags(CMAKE_ARGS="-DGGML_AVX512=ON -DGGML_NATIVE=ON")
    assert built[-2:] == ["-DGGML_AVX512=ON", "-DGGML_NATIVE=ON"]
