"""Errors as classes by status and code, each carrying the problem (RFC 9457) and the request id."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, cast

from ._generated import PositionAction, Problem, ProblemErrorsItem

__all__ = [
    "ZsdError",
    "APIConnectionError",
    "AuthenticationError",
    "PermissionError",
    "NotFoundError",
    "InvalidRequestError",
    "IdempotencyError",
    "RateLimitError",
    "ConflictError",
    "APIError",
    "ProverError",
    "NodeNotFoundError",
    "PositionActionFailedError",
    "error_for",
]


class ZsdError(Exception):
    """Base of every error the SDK raises. Branch on ``code``, never on the message."""

    message: str
    status: Optional[int]
    code: Optional[str]
    problem: Optional[Problem]
    request_id: Optional[str]
    headers: Dict[str, str]

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        problem: Optional[Problem] = None,
        request_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.problem = problem
        self.request_id = request_id
        self.headers = dict(headers or {})

    def __str__(self) -> str:
        about = [f"code {self.code}"] if self.code else []
        if self.request_id:
            about.append(f"request {self.request_id}")
        return f"{self.message} ({', '.join(about)})" if about else self.message


class APIConnectionError(ZsdError):
    """The API could not be reached, or did not answer in time (after every retry)."""


class AuthenticationError(ZsdError):
    """401: the key is missing, malformed, unknown, revoked or of the other environment."""


class PermissionError(ZsdError):  # noqa: A001 - the name stripe-python and the issue use
    """403: the key may not do this."""


class NotFoundError(ZsdError):
    """404: no such resource (or no such route)."""


class InvalidRequestError(ZsdError):
    """400 or 422 (and other 4xx about the request itself): ``errors`` names the failing fields."""

    @property
    def errors(self) -> List[ProblemErrorsItem]:
        return list(self.problem.get("errors", [])) if self.problem else []


class IdempotencyError(ZsdError):
    """An Idempotency-Key reused with another body (422), or still in flight after every retry (409)."""


class RateLimitError(ZsdError):
    """429: the account's budget for this window is spent; ``retry_after`` says for how many seconds."""

    retry_after: Optional[float]

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ConflictError(ZsdError):
    """409: the request conflicts with the resource's state (a proof already used, a mint pending, …)."""


class APIError(ZsdError):
    """5xx, or an answer the SDK cannot read: a fault on the server's side or upstream."""


class PositionActionFailedError(ZsdError):
    """A position action failed (the relay could not send it, or the chain reverted it): ``action`` has its
    failureCode and failureReason; ``code`` is the failureCode."""

    action: PositionAction

    def __init__(self, action: PositionAction) -> None:
        reason = action.get("failureReason") or "no reason given"
        super().__init__(f"Action {action['actionId']} failed: {reason}", code=action.get("failureCode"))
        self.action = action


class ProverError(ZsdError):
    """Proving locally (the JavaScript CLI run as a subprocess) failed."""


class NodeNotFoundError(ProverError):
    """Node.js, which runs the prover, is not installed or not on PATH (set ZSD_NODE)."""


def error_for(
    status: int,
    body: Any,
    headers: Mapping[str, str],
    retry_after: Optional[float] = None,
) -> ZsdError:
    """The error class for an answer: by ``code`` where the code says more than the status, else by status."""
    problem: Optional[Problem] = None
    if isinstance(body, dict) and isinstance(cast(Dict[str, Any], body).get("code"), str):
        problem = cast(Problem, body)
    code = problem["code"] if problem else None
    request_id = (problem.get("requestId") if problem else None) or headers.get("x-request-id")
    detail = problem.get("detail") if problem else None
    message = detail or f"HTTP {status}"
    kwargs: Dict[str, Any] = {
        "status": status,
        "code": code,
        "problem": problem,
        "request_id": request_id,
        "headers": headers,
    }
    if code in ("idempotency_key_reused", "idempotency_request_in_progress"):
        return IdempotencyError(message, **kwargs)
    if status == 401:
        return AuthenticationError(message, **kwargs)
    if status == 403:
        return PermissionError(message, **kwargs)
    if status == 404:
        return NotFoundError(message, **kwargs)
    if status == 409:
        return ConflictError(message, **kwargs)
    if status == 429:
        return RateLimitError(message, retry_after=retry_after, **kwargs)
    if 400 <= status < 500:
        return InvalidRequestError(message, **kwargs)
    return APIError(message, **kwargs)
