"""Standard Webhooks verification (https://www.standardwebhooks.com), in the standard library."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Callable, Mapping, Union

from .errors import ZsdError

__all__ = ["Webhook", "WebhookVerificationError"]

SECRET_PREFIX = "whsec_"
# Older and newer than this is refused: a captured delivery cannot be replayed later.
TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(ZsdError):
    """The delivery is not signed by the agent's secret, or is too old or too new."""


class Webhook:
    """Verifies deliveries signed with an agent's ``whsec_…`` secret.

    >>> event = Webhook(secret).verify(request_body, request_headers)
    """

    def __init__(self, secret: Union[str, bytes], *, now: Callable[[], float] = time.time) -> None:
        if isinstance(secret, bytes):
            self._key = secret
        else:
            encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
            try:
                self._key = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as e:
                raise ValueError("A webhook secret is whsec_ followed by base64") from e
        # An empty key is one anyone can sign with (a secret read from an unset variable, say).
        if not self._key:
            raise ValueError("The webhook secret is empty")
        self._now = now

    def verify(self, payload: Union[str, bytes], headers: Mapping[str, str]) -> Any:
        """The parsed event when one of the ``v1`` signatures is this secret's and the timestamp is recent."""
        lower = {k.lower(): v for k, v in headers.items()}
        msg_id = lower.get("webhook-id")
        timestamp = lower.get("webhook-timestamp")
        signatures = lower.get("webhook-signature")
        if not msg_id or not timestamp or not signatures:
            raise WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature header")
        try:
            sent_at = int(timestamp)
        except ValueError:
            raise WebhookVerificationError("webhook-timestamp is not a number of seconds") from None
        now = self._now()
        if sent_at < now - TOLERANCE_SECONDS:
            raise WebhookVerificationError("The delivery's timestamp is too old")
        if sent_at > now + TOLERANCE_SECONDS:
            raise WebhookVerificationError("The delivery's timestamp is too new")
        body = payload.encode() if isinstance(payload, str) else payload
        expected = self.sign(msg_id, sent_at, body).split(",", 1)[1]
        # Several signatures while a secret rotates: any v1 one of this secret will do.
        for candidate in signatures.split(" "):
            version, _, signature = candidate.partition(",")
            if version == "v1" and hmac.compare_digest(signature.encode(), expected.encode()):
                return json.loads(body)
        raise WebhookVerificationError("No matching signature found")

    def sign(self, msg_id: str, timestamp: Union[int, float], payload: Union[str, bytes]) -> str:
        """``v1,<base64 HMAC-SHA256 of id.timestamp.payload>`` as the webhook-signature header carries it."""
        # Over the bytes as sent: a body decoded and encoded again need not be the same bytes.
        body = payload.encode() if isinstance(payload, str) else payload
        content = f"{msg_id}.{int(timestamp)}.".encode() + body
        digest = hmac.new(self._key, content, hashlib.sha256).digest()
        return "v1," + base64.b64encode(digest).decode()


