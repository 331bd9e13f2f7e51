"""Errors the memory service raises. Every message is one line a person can act on."""


class MemoryInputError(ValueError):
    """Bad input: nothing was written."""


class SecretRefused(MemoryInputError):
    """The text carries a credential: nothing was written."""


class FactNotFound(LookupError):
    """No fact has that id."""


class FactAlreadyDeleted(MemoryInputError):
    """The fact exists but is soft-deleted, so it cannot be corrected or forgotten again."""
