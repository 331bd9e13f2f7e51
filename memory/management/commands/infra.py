from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory import infra
from memory.management.base import KaraniCommand


class Command(KaraniCommand):
    help = (
        "Start karani's optional local infrastructure with Docker Compose "
        "(PostgreSQL + pgvector; Ollama with --profile local-llm) and wait until it answers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["up"], help="up: start and wait")
        parser.add_argument("--profile", choices=infra.PROFILES, help="also start Ollama")
        parser.add_argument(
            "--wait", type=float, default=120.0, help="seconds to wait for the services"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            started = infra.up(profile=opts["profile"], wait_seconds=opts["wait"])
        except infra.InfraError as exc:
            raise CommandError(str(exc)) from None
        for service in started:
            self.stdout.write(f"{service.name} answers at {service.address}")
        self.stdout.write(f"KARANI_VECTOR_DSN={infra.VECTOR_DSN}")
