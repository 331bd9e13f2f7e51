"""Errors the memory service raises. Every message is one line a person can act on."""


class MemoryInputError(ValueError):
    """Bad input: nothing was written."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        # Which input was wrong, so the API and the admin can point at it without parsing
        # the message; None when the error is about the request as a whole.
        self.field = field


class SecretRefused(MemoryInputError):
    """The text carries a credential: nothing was written."""

    def __init__(self, message: str, *, field: str = "text", kinds: tuple[str, ...] = ()) -> None:
        super().__init__(message, field=field)
        # What the credential looked like, so callers can name the detected type.
        self.kinds = kinds


class FactNotFound(LookupError):
    """No fact has that id."""


class FactAlreadyDeleted(MemoryInputError):
    """The fact exists but is soft-deleted, so it cannot be corrected or forgotten again."""


class FactAlreadyLive(MemoryInputError):
    """A correction's text is another live fact already: a conflict with the ledger's state."""


def first_line(exc: BaseException) -> str:
    """An exception as one line for a person: its message's first line, or its type's name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
