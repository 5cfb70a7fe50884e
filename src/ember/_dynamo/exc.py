"""torch._dynamo.exc: the errors ``ember.compile`` raises."""

__all__ = ["TorchDynamoException", "Unsupported", "UserError"]


class TorchDynamoException(RuntimeError):
    """Base class of ember.compile's errors (torch's name)."""


class Unsupported(TorchDynamoException):
    """A compiled function did something a recorded program cannot hold (``fullgraph=True``)."""


class UserError(TorchDynamoException):
    """The compiled function was called in a way it cannot be compiled."""
