"""`karani infra up`: start the optional local services with Docker Compose and wait until
they answer; every failure is one line."""

import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg

PROFILES = ("local-llm",)
VECTOR_DSN = "postgresql://karani:karani@127.0.0.1:5433/karani_vectors"
OLLAMA_URL = "http://127.0.0.1:11434"
# Beside the package in a source checkout; a pip-installed karani has no deploy/ directory.
COMPOSE_FILE = Path(__file__).resolve().parent.parent / "deploy" / "compose.yaml"

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess]


class InfraError(RuntimeError):
    """One line for the user: what failed and what to do."""


@dataclass(frozen=True)
class Service:
    name: str
    address: str
    probe: Callable[[], bool]


def up_command(*, compose: Path, profile: str | None) -> list[str]:
    if profile is not None and profile not in PROFILES:
        raise InfraError(f"unknown profile {profile!r}; use one of: {', '.join(PROFILES)}")
    command = ["docker", "compose", "-f", str(compose)]
    if profile:
        command += ["--profile", profile]
    return [*command, "up", "-d"]


def _postgres_answers() -> bool:
    try:
        psycopg.connect(VECTOR_DSN, connect_timeout=2).close()
    except psycopg.Error:
        return False
    return True


def _ollama_answers() -> bool:
    try:
        with urllib.request.urlopen(f"{OLLAMA_URL}/api/tags", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def services(profile: str | None) -> list[Service]:
    found = [Service("vectors (PostgreSQL + pgvector)", VECTOR_DSN, _postgres_answers)]
    if profile == "local-llm":
        found.append(Service("ollama", OLLAMA_URL, _ollama_answers))
    return found


def _run(command: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, check=False)


def up(
    *,
    profile: str | None = None,
    compose: Path | None = None,
    runner: Runner = _run,
    which: Callable[[str], str | None] = shutil.which,
    wait_seconds: float = 120.0,
    probes: list[Service] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Service]:
    """Start the services and wait until they answer. Raises InfraError."""
    compose = compose or COMPOSE_FILE
    command = up_command(compose=compose, profile=profile)
    if not compose.is_file():
        raise InfraError(f"compose file {compose} not found (deploy/ comes with a clone of karani)")
    if which("docker") is None:
        raise InfraError(
            "docker is not installed here; install Docker (with the compose plugin) or point "
            "KARANI_VECTOR_DSN at any PostgreSQL with pgvector"
        )
    try:
        if runner(["docker", "compose", "version"]).returncode != 0:
            raise InfraError(
                "this docker has no compose plugin; install docker-compose-plugin (Compose v2)"
            )
        done = runner(command)
    except OSError as exc:
        raise InfraError(f"could not run docker: {exc}") from None
    if done.returncode != 0:
        # docker prints some of its complaints on stdout.
        stderr = f"{done.stdout or ''}\n{done.stderr or ''}".strip()
        if "Cannot connect to the Docker daemon" in stderr or "docker.sock" in stderr:
            raise InfraError("the Docker engine is not running (docker compose cannot reach it)")
        last = stderr.splitlines()[-1] if stderr else f"exit status {done.returncode}"
        raise InfraError(f"docker compose up failed: {last}")
    started = probes if probes is not None else services(profile)
    deadline = time.monotonic() + wait_seconds
    waiting = started
    while waiting := [s for s in waiting if not s.probe()]:
        if time.monotonic() >= deadline:
            names = ", ".join(s.name for s in waiting)
            raise InfraError(f"started, but no answer after {wait_seconds:g}s from: {names}")
        sleep(1.0)
    return started
