"""HTTP with retries: exponential back-off with jitter, Retry-After honoured, one Idempotency-Key per POST."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional

from .errors import APIConnectionError, APIError, ZsdError, error_for

VERSION = "0.1.0"

# Statuses worth another attempt: the same request may well succeed later.
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
NOT_RETRIED = frozenset({"mint_pending"})


@dataclass(frozen=True)
class Response:
    """One answer: its status, headers (lower-case names), parsed body and request id."""

    status: int
    headers: Dict[str, str]
    body: Any
    request_id: Optional[str]


@dataclass
class Requestor:
    """Sends requests to one API with one key; ``sleep`` and ``random`` are replaceable for tests."""

    # Out of the dataclass repr: a logged requestor must not print the key.
    api_key: str = field(repr=False)
    base_url: str
    timeout: float = 30.0
    max_network_retries: int = 2
    initial_retry_delay: float = 0.5
    max_retry_delay: float = 8.0
    # A Retry-After longer than this is not waited for: the error is raised instead.
    max_retry_after: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random
    new_idempotency_key: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    last_response: Optional[Response] = None

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Optional[Mapping[str, Any]] = None,
        query: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> Any:
        """The parsed JSON of a 2xx answer; raises a ZsdError subclass otherwise."""
        url = self.base_url.rstrip("/") + path
        if query:
            pairs = {k: _query_value(v) for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": f"zsd-python/{VERSION}",
        }
        data: Optional[bytes] = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        if method == "POST":
            # One key for every attempt: a retry of a POST that did reach the server replays its answer.
            headers["Idempotency-Key"] = idempotency_key or self.new_idempotency_key()

        attempt = 0
        while True:
            try:
                response = self._send(method, url, headers, data)
            except APIConnectionError:
                if attempt >= self.max_network_retries:
                    raise
                self.sleep(self.backoff(attempt))
                attempt += 1
                continue
            self.last_response = response
            if 200 <= response.status < 300:
                return response.body
            retry_after = _retry_after(response.headers.get("retry-after"))
            error = error_for(response.status, response.body, response.headers, retry_after)
            if not self._should_retry(response, error) or attempt >= self.max_network_retries:
                raise error
            if retry_after is not None and retry_after > self.max_retry_after:
                raise error
            delay = self.backoff(attempt)
            if retry_after is not None:
                # Retry-After is a floor with the jitter above it: a server shedding load tells every caller
                # it turned away the same Retry-After, and callers coming back at one instant are turned away again.
                step = min(self.max_retry_delay, self.initial_retry_delay * (2**attempt))
                delay = max(step / 2, retry_after) + step * self.random() / 2
            self.sleep(delay)
            attempt += 1

    def _should_retry(self, response: Response, error: ZsdError) -> bool:
        # A mint queued but not yet confirmed: the API says to poll it, never to post it again.
        if error.code in NOT_RETRIED:
            return False
        if response.status == 409:
            return error.code == "idempotency_request_in_progress"
        return response.status in RETRYABLE_STATUSES

    def backoff(self, attempt: int) -> float:
        """Exponential, capped, with jitter in [50 %, 100 %] so that clients do not retry in step."""
        delay = min(self.max_retry_delay, self.initial_retry_delay * (2**attempt))
        return delay * (0.5 + self.random() / 2)

    def _send(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes]) -> Response:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return _response(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as answer:
            with answer:
                return _response(answer.code, answer.headers, answer.read())
        except (urllib.error.URLError, http.client.HTTPException, socket.timeout, ConnectionError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise APIConnectionError(f"Could not reach the ZSD API at {url}: {reason}") from e


def _response(status: int, raw_headers: Any, raw: bytes) -> Response:
    headers = {k.lower(): v for k, v in raw_headers.items()}
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            if 200 <= status < 300:
                raise APIError(
                    f"The API answered {status} with a body that is not JSON",
                    status=status,
                    request_id=headers.get("x-request-id"),
                    headers=headers,
                ) from None
            body = raw.decode("utf-8", "replace")
    return Response(status=status, headers=headers, body=body, request_id=headers.get("x-request-id"))


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
