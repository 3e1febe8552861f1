"""ZSD, the Shielded Dollar: the Python SDK of the relay API.

>>> import zsd
>>> client = zsd.Client("sk_test_…")
>>> client.ledger.collateral()["collateralRatio"]
"""

from . import _generated as types
from . import seal
from ._http import VERSION as __version__
from .client import (
    AnonymityWarning,
    Client,
    MintFailedError,
    NewNote,
    PositionOwner,
    ProposalWait,
    RedemptionFailedError,
    RedemptionProgress,
    Signature,
    SmallAnonymitySetWarning,
    TypedData,
    WaitTimeoutError,
    WithdrawalFailedError,
    describe_payout,
    to_wei,
)
from .errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    ConflictError,
    IdempotencyError,
    InvalidRequestError,
    NodeNotFoundError,
    NotFoundError,
    PermissionError,
    PositionActionFailedError,
    ProverError,
    RateLimitError,
    ZsdError,
)
from .resources import redirect_typed_data
from .webhook import Webhook, WebhookVerificationError

__all__ = [
    "__version__",
    "types",
    "seal",
    "AnonymityWarning",
    "Client",
    "NewNote",
    "PositionOwner",
    "ProposalWait",
    "Signature",
    "TypedData",
    "RedemptionProgress",
    "describe_payout",
    "to_wei",
    "redirect_typed_data",
    "Webhook",
    "WebhookVerificationError",
    "ZsdError",
    "APIConnectionError",
    "APIError",
    "AuthenticationError",
    "ConflictError",
    "IdempotencyError",
    "InvalidRequestError",
    "MintFailedError",
    "NodeNotFoundError",
    "NotFoundError",
    "PermissionError",
    "PositionActionFailedError",
    "ProverError",
    "RateLimitError",
    "RedemptionFailedError",
    "SmallAnonymitySetWarning",
    "WaitTimeoutError",
    "WithdrawalFailedError",
]
