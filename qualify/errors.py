class QualifyError(ValueError):
    """Bad input or state for the pipeline; the message is one line, nothing was written."""
