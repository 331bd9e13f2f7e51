"""`karani infra up`: the compose file, the invocation, and clear failures without Docker.

There is no Docker engine on these machines, so the runner is injected; the real command is
only run to prove it fails in one line with a non-zero exit.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memory import infra

REPO = Path(__file__).resolve().parent.parent
COMPOSE = REPO / "deploy" / "compose.yaml"


class Recorder:
    def __init__(self, *results: int, stderr: str = "") -> None:
        self.calls: list[list[str]] = []
        self.results = list(results)
        self.stderr = stderr

    def __call__(self, command):
        self.calls.append(list(command))
        code = self.results.pop(0) if self.results else 0
        return subprocess.CompletedProcess(command, code, stdout="", stderr=self.stderr)


def _answers(name: str = "vectors"):
    return [infra.Service(name, "here", lambda: True)]


def test_it_ships_a_compose_file_with_pgvector_and_ollama_behind_a_profile():
    spec = yaml.safe_load(COMPOSE.read_text())

    vectors, ollama = spec["services"]["vectors"], spec["services"]["ollama"]
    assert vectors["image"].startswith("pgvector/pgvector:")
    assert "profiles" not in vectors
    assert ollama["profiles"] == ["local-llm"]
    assert "healthcheck" in vectors
    assert any(":5432" in p for p in vectors["ports"])
    assert infra.VECTOR_DSN.endswith("@127.0.0.1:5433/karani_vectors")


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        (None, ["docker", "compose", "-f", str(COMPOSE), "up", "-d"]),
        (
            "local-llm",
            ["docker", "compose", "-f", str(COMPOSE), "--profile", "local-llm", "up", "-d"],
        ),
    ],
)
def test_it_builds_the_compose_invocation(profile, expected):
    runner = Recorder()

    infra.up(
        profile=profile,
        compose=COMPOSE,
        runner=runner,
        which=lambda _: "/x/docker",
        probes=_answers(),
    )

    assert runner.calls == [["docker", "compose", "version"], expected]


def test_it_refuses_an_unknown_profile():
    with pytest.raises(infra.InfraError, match="unknown profile 'gpu'"):
        infra.up_command(compose=COMPOSE, profile="gpu")


def test_it_fails_clearly_without_docker():
    with pytest.raises(infra.InfraError, match="docker is not installed"):
        infra.up(compose=COMPOSE, runner=Recorder(), which=lambda _: None)


def test_it_fails_clearly_without_the_compose_plugin():
    with pytest.raises(infra.InfraError, match="no compose plugin"):
        infra.up(compose=COMPOSE, runner=Recorder(1), which=lambda _: "/x/docker")


def test_it_fails_clearly_when_the_engine_is_not_running():
    runner = Recorder(
        0, 1, stderr="Cannot connect to the Docker daemon at unix:///var/run/docker.sock."
    )
    with pytest.raises(infra.InfraError, match="Docker engine is not running"):
        infra.up(compose=COMPOSE, runner=runner, which=lambda _: "/x/docker")


def test_it_waits_until_the_services_answer():
    answers = iter([False, False, True])
    probe = infra.Service("vectors", "here", lambda: next(answers))
    naps: list[float] = []

    started = infra.up(
        compose=COMPOSE,
        runner=Recorder(),
        which=lambda _: "/x/docker",
        probes=[probe],
        sleep=naps.append,
    )

    assert [s.name for s in started] == ["vectors"] and len(naps) == 2


def test_it_gives_up_waiting_with_the_silent_services_named():
    probe = infra.Service("ollama", "here", lambda: False)
    with pytest.raises(infra.InfraError, match="no answer after 0s from: ollama"):
        infra.up(
            compose=COMPOSE,
            runner=Recorder(),
            which=lambda _: "/x/docker",
            probes=[probe],
            wait_seconds=0,
            sleep=lambda _: None,
        )


def test_the_command_fails_in_one_line_on_this_machine(tmp_path):
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "infra", "up", "--profile", "local-llm"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "KARANI_DATA_DIR": str(tmp_path),
            "MEM0_TELEMETRY": "False",
        },
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("karani: "), done.stderr
    assert "docker" in lines[0].lower()
