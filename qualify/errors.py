from memory.errors import MemoryInputError, SecretRefused


class QualifyError(ValueError):
    """Bad input or state for the pipeline; the message is one line, nothing was written."""


class QualifyInputError(QualifyError, MemoryInputError):
    """Bad input naming its field: the API renders it in its one error shape, like memory's."""


class QualifySecretRefused(QualifyInputError, SecretRefused):
    """A field holds a credential (the API's ``secret_refused``)."""


class PostingNotFound(QualifyError, LookupError):
    """No live posting has that external id."""


class DecisionConflict(QualifyError):
    """The posting already has a different live verdict under the same prompt version."""
