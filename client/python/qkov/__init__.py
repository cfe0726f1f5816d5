"""qkov: a notebook's client for qkov-server (docs/notebook.md).

    import qkov
    q = qkov.connect()                     # $QKOV_SERVER, $QKOV_TOKEN_FILE
    q.results("paper-ratio")               # one row per trial
    q.aggregate("paper-ratio", by=["parameterization", "lr_ratio"],
                metrics=["final_dtap"])
"""

from qkov.client import Client, connect
from qkov.errors import (AlreadyExists, Cancelled, DeadlineExceeded,
                         FailedPrecondition, Internal, InvalidArgument,
                         NotFound, PermissionDenied, QkovError,
                         ResourceExhausted, Unauthenticated, Unavailable)

__all__ = [
    "Client", "connect", "QkovError", "InvalidArgument", "NotFound",
    "AlreadyExists", "PermissionDenied", "Unauthenticated", "Unavailable",
    "DeadlineExceeded", "ResourceExhausted", "FailedPrecondition",
    "Cancelled", "Internal",
]
