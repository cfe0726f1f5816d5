"""The exceptions a qkov client call raises: one per gRPC status code.

Each carries the server's one-line message (``str(e)``), the gRPC code
(``e.code``) and the server address (``e.address``). ``QkovError`` is the
base of them all, so ``except qkov.QkovError`` catches every failed call.
"""

import grpc


class QkovError(Exception):
    """A failed call to qkov-server."""

    def __init__(self, message, code=None, address=None):
        super().__init__(message)
        self.code = code
        self.address = address


class InvalidArgument(QkovError):
    """The request is malformed: a bad name, value, key or sweep file."""


class NotFound(QkovError):
    """No such sweep, trial or metric."""


class AlreadyExists(QkovError):
    """A sweep of that name exists with another definition."""


class PermissionDenied(QkovError):
    """The token's role does not allow the call, or the sweep is another's."""


class Unauthenticated(QkovError):
    """No token, or one the server does not know."""


class Unavailable(QkovError):
    """The server cannot be reached (or is shutting down)."""


class DeadlineExceeded(QkovError):
    """The call took longer than the client's deadline."""


class ResourceExhausted(QkovError):
    """The answer is larger than the server gives in one call."""


class FailedPrecondition(QkovError):
    """The sweep is not in a state that allows the call."""


class Cancelled(QkovError):
    """The call was cancelled."""


class Internal(QkovError):
    """The server failed; its log says why."""


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.OUT_OF_RANGE: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.INTERNAL: Internal,
}


def from_rpc_error(error, address):
    """The named exception for a grpc.RpcError."""
    code = error.code()
    message = error.details() or code.name.lower()
    if code == grpc.StatusCode.UNAVAILABLE:
        message = "cannot reach qkov-server at %s: %s" % (address, message)
    return _BY_CODE.get(code, QkovError)(message, code=code, address=address)
