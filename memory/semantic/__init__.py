"""The optional semantic index (KARANI_MEMORY=mem0): mem0 over pgvector with local models.

Split by concern: ``config`` (settings), ``client`` (lazy mem0 construction on our own pool),
``breaker`` and ``guard`` (the fallback invariant), ``store`` (rows in and out of the
collection), ``sync`` (after-commit indexing), ``search`` (hybrid recall: dense + memory.lexical),
``reindex`` (bulk rebuild) and ``health`` (doctor). Nothing here imports mem0 at module
level: it is imported on first use, in mem0 mode only.
"""
