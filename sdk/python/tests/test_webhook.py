"""Standard Webhooks verification: against our own signatures and the JavaScript standardwebhooks library's."""

from __future__ import annotations

import base64
import json
import time
import unittest

import zsd

from .helpers import run_node

SECRET = "whsec_" + base64.b64encode(b"sixteen byte key for tests!!").decode()
OTHER = "whsec_" + base64.b64encode(b"another key, not the agent's").decode()
PAYLOAD = json.dumps({"id": "evt_1", "type": "ping", "data": {"message": "hi"}})


def headers(msg_id: str, timestamp: int, signature: str) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


class WebhookTest(unittest.TestCase):
    def setUp(self) -> None:
        self.now = int(time.time())
        self.hook = zsd.Webhook(SECRET)

    def signed(self, payload: str = PAYLOAD, *, secret: str = SECRET, at: int = 0) -> dict[str, str]:
        timestamp = at or self.now
        return headers("msg_1", timestamp, zsd.Webhook(secret).sign("msg_1", timestamp, payload))

    def test_accepts_its_own_signature_and_returns_the_event(self) -> None:
        self.assertEqual(self.hook.verify(PAYLOAD, self.signed())["type"], "ping")
        self.assertEqual(self.hook.verify(PAYLOAD.encode(), self.signed())["id"], "evt_1")

    def test_signs_the_bytes_as_sent(self) -> None:
        raw = b'{"type":"ping","data":{"message":"caf\xc3\xa9"}}'
        signed = headers("msg_b", self.now, self.hook.sign("msg_b", self.now, raw))
        self.assertEqual(self.hook.verify(raw, signed)["data"]["message"], "caf\u00e9")
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(raw.replace(b"\xc3\xa9", b"e"), signed)

    def test_header_names_are_case_insensitive(self) -> None:
        upper = {k.title(): v for k, v in self.signed().items()}
        self.assertEqual(self.hook.verify(PAYLOAD, upper)["type"], "ping")

    def test_refuses_a_changed_body_another_secret_and_a_changed_id(self) -> None:
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(PAYLOAD.replace("hi", "ho"), self.signed())
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(PAYLOAD, self.signed(secret=OTHER))
        changed = {**self.signed(), "webhook-id": "msg_2"}
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(PAYLOAD, changed)

    def test_refuses_an_empty_secret(self) -> None:
        # An empty HMAC key is one anyone can sign with: a secret read from an unset variable must not verify.
        for empty in ("", "whsec_", b""):
            with self.subTest(secret=empty), self.assertRaises(ValueError):
                zsd.Webhook(empty)

    def test_refuses_timestamps_outside_five_minutes(self) -> None:
        self.assertEqual(self.hook.verify(PAYLOAD, self.signed(at=self.now - 290))["type"], "ping")
        for at in (self.now - 310, self.now + 310):
            with self.assertRaises(zsd.WebhookVerificationError):
                self.hook.verify(PAYLOAD, self.signed(at=at))
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(PAYLOAD, {**self.signed(), "webhook-timestamp": "soon"})

    def test_any_of_several_signatures_will_do_and_only_v1(self) -> None:
        ours = self.signed()["webhook-signature"]
        theirs = self.signed(secret=OTHER)["webhook-signature"]
        rotated = {**self.signed(), "webhook-signature": f"{theirs} {ours}"}
        self.assertEqual(self.hook.verify(PAYLOAD, rotated)["type"], "ping")
        v2 = {**self.signed(), "webhook-signature": ours.replace("v1,", "v2,")}
        with self.assertRaises(zsd.WebhookVerificationError):
            self.hook.verify(PAYLOAD, v2)

    def test_refuses_missing_headers_and_bad_secrets(self) -> None:
        for name in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            partial = {k: v for k, v in self.signed().items() if k != name}
            with self.assertRaises(zsd.WebhookVerificationError, msg=name):
                self.hook.verify(PAYLOAD, partial)
        with self.assertRaises(ValueError):
            zsd.Webhook("whsec_not base64!")


class StandardWebhooksLibraryTest(unittest.TestCase):
    """The JavaScript reference implementation signs, Python verifies; and the other way round."""

    def test_verifies_what_the_js_library_signs_and_the_js_library_verifies_ours(self) -> None:
        now = int(time.time())
        ours = zsd.Webhook(SECRET).sign("msg_py", now, PAYLOAD)
        result = run_node(
            """
            import { Webhook } from "standardwebhooks";
            import { readFileSync } from "node:fs";
            const input = JSON.parse(readFileSync(0, "utf8"));
            const hook = new Webhook(input.secret);
            const signature = hook.sign("msg_js", new Date(input.now * 1000), input.payload);
            let verifiedOurs = false;
            try {
              hook.verify(input.payload, {
                "webhook-id": "msg_py", "webhook-timestamp": String(input.now), "webhook-signature": input.ours,
              });
              verifiedOurs = true;
            } catch {}
            let verifiedTampered = false;
            try {
              hook.verify(input.payload + " ", {
                "webhook-id": "msg_py", "webhook-timestamp": String(input.now), "webhook-signature": input.ours,
              });
              verifiedTampered = true;
            } catch {}
            console.log(JSON.stringify({ signature, verifiedOurs, verifiedTampered }));
            """,
            {"secret": SECRET, "now": now, "payload": PAYLOAD, "ours": ours},
        )
        self.assertTrue(result["verifiedOurs"])
        self.assertFalse(result["verifiedTampered"])
        self.assertEqual(result["signature"], zsd.Webhook(SECRET).sign("msg_js", now, PAYLOAD))
        event = zsd.Webhook(SECRET).verify(PAYLOAD, headers("msg_js", now, result["signature"]))
        self.assertEqual(event["type"], "ping")


if __name__ == "__main__":
    unittest.main()
