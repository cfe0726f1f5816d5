"""qkov: a notebook's client for qkov-server (docs/notebook.md).

    import qkov
    q = qkov.connect()                     # $QKOV_SERVER, $QKOV_TOKEN_FILE
    q.results("paper-ratio")               # one row per trial
    q.aggregate("paper-ratio", by=["config.parameterization",
                "config.lr_ratio"], metrics=["result.final_dtap"])
"""

# The project's version (CMakeLists.txt), the package's (pyproject.toml reads
# it here) and python3-qkov's; package_version_test checks all three agree.
__version__ = "0.1.0"

from qkov.client import Client, Sweep, Trial, connect  # noqa: E402
from qkov.errors import (  # noqa: E402
    AlreadyExists, Cancelled, DeadlineExceeded, FailedPrecondition, Internal,
    InvalidArgument, NotFound, PermissionDenied, QkovError,
    ResourceExhausted, Unauthenticated, Unavailable)

__all__ = [
    "__version__", "Client", "Sweep", "Trial", "connect", "QkovError",
    "InvalidArgument", "NotFound", "AlreadyExists", "PermissionDenied",
    "Unauthenticated", "Unavailable", "DeadlineExceeded", "ResourceExhausted",
    "FailedPrecondition", "Cancelled", "Internal",
]
