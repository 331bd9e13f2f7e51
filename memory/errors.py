"""Errors the memory service raises. Every message is one line a person can act on."""


class MemoryInputError(ValueError):
    """Bad input: nothing was written."""


class SecretRefused(MemoryInputError):
    """The text carries a credential: nothing was written."""

    def __init__(self, message: str, *, field: str = "text", kinds: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        # Which input held the credential and what it looked like, so the API and admin can
        # point at the field and name the detected type without parsing the message.
        self.field = field
        self.kinds = kinds


class FactNotFound(LookupError):
    """No fact has that id."""


class FactAlreadyDeleted(MemoryInputError):
    """The fact exists but is soft-deleted, so it cannot be corrected or forgotten again."""
