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


class UrlTaken(DecisionConflict):
    """A new external id names a url that another live posting already has: final, not a race."""

    code = "url_taken"


class CompanyMismatch(DecisionConflict):
    """A decision names another company than the posting's: a posting's company never changes."""

    code = "company_mismatch"
