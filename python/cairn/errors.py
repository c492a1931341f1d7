"""Errors of the Cairn SDK: every failed call raises CairnError (or one of its
subclasses, by gRPC status code) carrying the code and cairnd's message."""
import grpc


class CairnError(Exception):
    """A failed Cairn call.

    Attributes:
      code: the grpc.StatusCode (e.g. grpc.StatusCode.NOT_FOUND).
      message: cairnd's message (or the SDK's, for local checks).
    """

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code.name, message))
        self.code = code
        self.message = message


class InvalidArgumentError(CairnError):
    pass


class NotFoundError(CairnError):
    pass


class AlreadyExistsError(CairnError):
    pass


class PermissionDeniedError(CairnError):
    pass


class UnauthenticatedError(CairnError):
    pass


class FailedPreconditionError(CairnError):
    pass


class ResourceExhaustedError(CairnError):
    pass


class UnavailableError(CairnError):
    pass


class DeadlineExceededError(CairnError):
    pass


_BY_CODE = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}


def make_error(code, message):
    """The CairnError subclass for `code` (CairnError itself for others)."""
    return _BY_CODE.get(code, CairnError)(code, message)


def from_rpc_error(error, target=None):
    """Converts a grpc.RpcError into a CairnError; UNAVAILABLE and
    DEADLINE_EXCEEDED name the server tried, as the CLI does."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    if target and code in (grpc.StatusCode.UNAVAILABLE,
                           grpc.StatusCode.DEADLINE_EXCEEDED):
        message = "%s (server %s)" % (message, target)
    return make_error(code, message or "")
