"""The optional semantic index (KARANI_MEMORY=mem0): mem0 over pgvector, imported on first use."""
