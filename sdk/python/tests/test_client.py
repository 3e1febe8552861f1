"""The client against a scripted local server: retries, back-off, idempotency keys, error mapping, coverage."""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import re
import tempfile
import time
import unittest
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Dict, List, Set, Tuple
from unittest import mock

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import zsd
from zsd import types
from zsd.client import WithdrawalFailedError

from .fake_server import Answer, FakeServer, problem
from .helpers import run_node


# The development seal key of local chains (public): @zsd/sdk/seal's DEV_SEAL_KEY.
DEV_SECRET = "0x" + hashlib.sha256(b"zsd development seal key 1").hexdigest()
OTHER_SECRET = "0x" + hashlib.sha256(b"another seal key").hexdigest()


def _public(secret: str) -> str:
    key = X25519PrivateKey.from_private_bytes(bytes.fromhex(secret[2:])).public_key()
    return "0x" + key.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


DEV_PUBLIC = _public(DEV_SECRET)
OTHER_PUBLIC = _public(OTHER_SECRET)
WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez"
OWNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
REDEMPTIONS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
DOMAIN = {"name": "ZSD Redemptions", "version": "1", "chainId": 31337, "verifyingContract": REDEMPTIONS}


def relay_with_seal_key(key_id: int = 1, public_key: str = DEV_PUBLIC) -> Dict[str, Any]:
    return {
        "object": "relay",
        "environment": "sandbox",
        "chainId": 31337,
        "contracts": {"Redemptions": {"address": REDEMPTIONS, "startBlock": 0}},
        "sealKey": {"keyId": key_id, "publicKey": public_key, "algorithm": "x25519-hkdf-sha256-chacha20poly1305"},
    }


def open_dev(sealed: str, owner: str) -> str:
    return zsd.seal.open_sealed_address(
        [(1, DEV_SECRET)], chain_id=31337, redemptions=REDEMPTIONS, owner=owner, sealed=sealed
    )


class ClientTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.server = FakeServer()
        self.addCleanup(self.server.close)
        self.client = zsd.Client("sk_test_unit", self.server.url, max_network_retries=3)
        self.sleeps: List[float] = []
        self.client.requestor.sleep = self.sleeps.append
        # Jitter at its midpoint unless a test says otherwise: delays are then exact.
        self.client.requestor.random = lambda: 0.5

    def script(self, *answers: Answer) -> None:
        self.server.answers.extend(answers)


class RetryTest(ClientTestCase):
    def test_retries_5xx_then_returns_the_answer(self) -> None:
        self.script(Answer(503, problem(503, "upstream_unavailable")), Answer(500, problem(500, "internal_error")))
        self.script(Answer(200, {"object": "supply", "circulating": "1"}))
        supply = self.client.ledger.supply()
        self.assertEqual(supply["circulating"], "1")
        self.assertEqual(len(self.server.received), 3)
        self.assertEqual(self.sleeps, [0.375, 0.75])

    def test_a_post_keeps_its_idempotency_key_across_retries(self) -> None:
        self.script(Answer(drop=True), Answer(502, None), Answer(201, {"object": "deposit", "leafIndex": 0}))
        self.client.sandbox.deposit(amount="1.5", note_commitment="42")
        keys = [r.headers.get("idempotency-key") for r in self.server.received]
        self.assertEqual(len(keys), 3)
        self.assertIsNotNone(keys[0])
        self.assertEqual(len(set(keys)), 1)
        self.assertRegex(keys[0] or "", r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        self.assertEqual(self.server.received[0].body, {"amount": "1.5", "noteCommitment": "42"})

    def test_each_post_gets_its_own_key_and_a_given_key_is_sent_as_is(self) -> None:
        self.client.keys.create("one")
        self.client.keys.create("two")
        self.client.keys.create("three", idempotency_key="mine-1")
        self.client.ledger.supply()
        keys = [r.headers.get("idempotency-key") for r in self.server.received]
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2], "mine-1")
        self.assertIsNone(keys[3], "a GET has no Idempotency-Key")

    def test_in_flight_409_is_retried_after_retry_after(self) -> None:
        self.script(
            Answer(409, problem(409, "idempotency_request_in_progress"), {"Retry-After": "2"}),
            Answer(202, {"status": "queued", "mintId": "mint_1"}),
        )
        queued = self.client.mints.create(proof_id="prf_1", amount="1", recipient="0x" + "1" * 40)
        self.assertEqual(queued["mintId"], "mint_1")
        # Retry-After, and a quarter of the first back-off step above it (random 0.5).
        self.assertEqual(self.sleeps, [2.125])
        self.assertEqual(
            self.server.received[0].headers["idempotency-key"], self.server.received[1].headers["idempotency-key"]
        )

    def test_a_pending_mint_is_not_posted_again(self) -> None:
        # The API's answer is "poll GET /v1/mints/{mintId} (do not post again)", as the JavaScript SDK does.
        self.script(
            Answer(504, problem(504, "mint_pending", mintId="mint_7"), {"Retry-After": "1"}),
            Answer(202, {"status": "queued", "mintId": "mint_7"}),
        )
        with self.assertRaises(zsd.APIError) as raised:
            self.client.mints.create(proof_id="prf_1", amount="1", recipient="0x" + "1" * 40)
        self.assertEqual(raised.exception.code, "mint_pending")
        self.assertEqual((raised.exception.problem or {}).get("mintId"), "mint_7")
        self.assertEqual(len(self.server.received), 1)

    def test_other_409s_are_not_retried(self) -> None:
        self.script(Answer(409, problem(409, "proof_already_used", mintId="mint_9")))
        with self.assertRaises(zsd.ConflictError) as raised:
            self.client.mints.create(proof_id="prf_1", amount="1", recipient="0x" + "1" * 40)
        self.assertEqual(raised.exception.code, "proof_already_used")
        self.assertEqual((raised.exception.problem or {}).get("mintId"), "mint_9")
        self.assertEqual(len(self.server.received), 1)
        self.assertEqual(self.sleeps, [])

    def test_429_honours_retry_after_then_raises_rate_limit_error(self) -> None:
        limited = Answer(429, problem(429, "rate_limited"), {"Retry-After": "3"})
        self.script(limited, limited, limited, limited)
        with self.assertRaises(zsd.RateLimitError) as raised:
            self.client.ledger.collateral()
        self.assertEqual(raised.exception.retry_after, 3.0)
        self.assertEqual(raised.exception.request_id, "req_rate_limited")
        self.assertEqual(len(self.server.received), 4, "the first attempt and three retries")
        # Retry-After wins over a shorter back-off, with the back-off's jitter above it (random 0.5: a quarter step).
        self.assertEqual(self.sleeps, [3.125, 3.25, 3.5])

    def test_back_off_longer_than_retry_after_is_kept(self) -> None:
        self.client.requestor.initial_retry_delay = 4.0
        self.script(Answer(503, problem(503, "upstream_unavailable"), {"Retry-After": "1"}), Answer(200, {}))
        self.client.ledger.supply()
        self.assertEqual(self.sleeps, [3.0])

    def test_a_shed_503_is_retried_after_retry_after_with_callers_spread_above_it(self) -> None:
        # Callers a server shed together all read Retry-After: 1; coming back at one instant they would be shed again.
        overloaded = Answer(503, problem(503, "overloaded"), {"Retry-After": "1"})
        waits: list[float] = []
        for draw in (0.0, 0.5, 0.99):
            self.sleeps.clear()
            self.client.requestor.random = lambda draw=draw: draw
            self.script(overloaded, Answer(200, {}))
            self.client.ledger.supply()
            self.assertEqual(len(self.sleeps), 1)
            waits.append(self.sleeps[0])
        self.assertEqual(waits[0], 1.0, "never sooner than Retry-After")
        self.assertTrue(all(1.0 <= w <= 1.25 for w in waits), waits)
        self.assertEqual(len(set(waits)), 3, f"spread above Retry-After: {waits}")
        # Bounded: after max_network_retries the 503 is raised, with its Retry-After.
        self.script(overloaded, overloaded, overloaded, overloaded)
        with self.assertRaises(zsd.APIError) as raised:
            self.client.ledger.supply()
        self.assertEqual(raised.exception.code, "overloaded")

    def test_retry_after_as_an_http_date(self) -> None:
        when = email.utils.formatdate(time.time() + 30, usegmt=True)
        self.script(Answer(429, problem(429, "rate_limited"), {"Retry-After": when}), Answer(200, {}))
        self.client.ledger.supply()
        self.assertEqual(len(self.sleeps), 1)
        self.assertTrue(25 <= self.sleeps[0] <= 31, self.sleeps)

    def test_a_retry_after_beyond_the_limit_is_not_waited_for(self) -> None:
        self.script(Answer(429, problem(429, "rate_limited"), {"Retry-After": "3600"}))
        with self.assertRaises(zsd.RateLimitError) as raised:
            self.client.ledger.supply()
        self.assertEqual(raised.exception.retry_after, 3600.0)
        self.assertEqual(self.sleeps, [])

    def test_back_off_is_exponential_capped_and_jittered(self) -> None:
        requestor = self.client.requestor
        requestor.max_network_retries = 6
        for _ in range(7):
            self.script(Answer(drop=True))
        with self.assertRaises(zsd.APIConnectionError):
            self.client.ledger.supply()
        self.assertEqual(self.sleeps, [0.375, 0.75, 1.5, 3.0, 6.0, 6.0])
        requestor.random = lambda: 0.0
        self.assertEqual([requestor.backoff(n) for n in range(6)], [0.25, 0.5, 1.0, 2.0, 4.0, 4.0])
        requestor.random = lambda: 0.999999
        self.assertAlmostEqual(requestor.backoff(3), 4.0, places=4)

    def test_connection_refused_is_retried_then_raised(self) -> None:
        self.server.close()
        with self.assertRaises(zsd.APIConnectionError) as raised:
            self.client.keys.create("offline")
        self.assertIn("Could not reach", str(raised.exception))
        self.assertEqual(len(self.sleeps), 3)

    def test_a_timeout_is_retried_with_the_same_key(self) -> None:
        self.client.requestor.timeout = 0.2
        self.script(Answer(201, {"late": True}, delay=0.6), Answer(201, {"object": "api_key"}))
        self.assertEqual(self.client.keys.create("slow")["object"], "api_key")
        first, second = self.server.received
        self.assertEqual(first.headers["idempotency-key"], second.headers["idempotency-key"])
        self.assertEqual(len(self.sleeps), 1)

    def test_4xx_are_not_retried(self) -> None:
        self.script(Answer(400, problem(400, "validation_failed")))
        with self.assertRaises(zsd.InvalidRequestError):
            self.client.keys.create("x")
        self.assertEqual(len(self.server.received), 1)

    def test_no_retries_when_max_network_retries_is_0(self) -> None:
        client = zsd.Client("sk_test_unit", self.server.url, max_network_retries=0)
        self.script(Answer(503, problem(503, "upstream_unavailable")))
        with self.assertRaises(zsd.APIError):
            client.ledger.supply()
        self.assertEqual(len(self.server.received), 1)


class ErrorMappingTest(ClientTestCase):
    CASES: List[Tuple[int, str, type]] = [
        (400, "validation_failed", zsd.InvalidRequestError),
        (401, "invalid_api_key", zsd.AuthenticationError),
        (403, "forbidden", zsd.PermissionError),
        (404, "resource_not_found", zsd.NotFoundError),
        (409, "mint_pending", zsd.ConflictError),
        (413, "body_too_large", zsd.InvalidRequestError),
        (422, "idempotency_key_reused", zsd.IdempotencyError),
        (422, "redemption_too_small", zsd.InvalidRequestError),
        (429, "rate_limited", zsd.RateLimitError),
        (500, "internal_error", zsd.APIError),
        (503, "price_stale", zsd.APIError),
        (504, "mint_timeout", zsd.APIError),
    ]

    def test_each_status_and_code_has_its_class_with_the_problem_and_request_id(self) -> None:
        self.client.requestor.max_network_retries = 0
        for status, code, cls in self.CASES:
            with self.subTest(code=code):
                self.script(Answer(status, problem(status, code, detail=f"about {code}"), {"X-Request-Id": "hdr"}))
                with self.assertRaises(zsd.ZsdError) as raised:
                    self.client.proofs.retrieve("prf_x")
                error = raised.exception
                self.assertIs(type(error), cls)
                self.assertEqual(error.status, status)
                self.assertEqual(error.code, code)
                self.assertEqual(error.request_id, f"req_{code}")
                self.assertEqual((error.problem or {}).get("detail"), f"about {code}")
                self.assertIn(f"about {code}", str(error))
                self.assertIn(f"req_{code}", str(error))

    def test_invalid_request_error_names_the_failing_fields(self) -> None:
        errors = [{"field": "body.amount", "message": "must be above 0"}]
        self.script(Answer(400, problem(400, "validation_failed", errors=errors)))
        with self.assertRaises(zsd.InvalidRequestError) as raised:
            self.client.sandbox.deposit(amount="0", note_commitment="1")
        self.assertEqual(raised.exception.errors, errors)

    def test_a_body_that_is_not_a_problem_still_maps_by_status_with_the_header_request_id(self) -> None:
        self.client.requestor.max_network_retries = 0
        self.script(Answer(502, None, {"X-Request-Id": "req_from_header"}))
        with self.assertRaises(zsd.APIError) as raised:
            self.client.ledger.supply()
        self.assertIsNone(raised.exception.code)
        self.assertEqual(raised.exception.request_id, "req_from_header")


class RequestShapeTest(ClientTestCase):
    def test_sends_the_key_and_encodes_paths_and_queries(self) -> None:
        self.client.redemptions.terms("0xabc")
        self.client.proofs.retrieve("prf_1/../keys")
        self.client.alerts.list(status="open", limit=5, raisedBy=None)
        self.client.redemptions.terms("0xabc", "ztestsapling1x")
        first, second, third, fourth = self.server.received
        self.assertEqual(first.headers["authorization"], "Bearer sk_test_unit")
        self.assertEqual(first.path, "/v1/redemptions/terms?owner=0xabc")
        self.assertEqual(second.path, "/v1/proofs/prf_1%2F..%2Fkeys")
        self.assertEqual(third.path, "/v1/agents/alerts?status=open&limit=5")
        self.assertEqual(fourth.path, "/v1/redemptions/terms?owner=0xabc&withdrawAddress=ztestsapling1x")

    def test_redirect_sends_exactly_one_destination_and_the_signed_terms(self) -> None:
        self.client.redemptions.redirect("red_1", sealed_address="0x01ab", deadline=7, signature="0xab")
        self.client.redemptions.redirect("12", note_commitment="99", deadline=8, signature="0xcd")
        first, second = self.server.received
        self.assertEqual((first.method, first.path), ("POST", "/v1/redemptions/red_1/redirect"))
        self.assertEqual(first.body, {"sealedAddress": "0x01ab", "deadline": 7, "signature": "0xab"})
        self.assertEqual(second.path, "/v1/redemptions/12/redirect")
        self.assertEqual(second.body, {"noteCommitment": "99", "deadline": 8, "signature": "0xcd"})
        with self.assertRaises(ValueError):
            self.client.redemptions.redirect("red_1", deadline=1, signature="0x")
        with self.assertRaises(ValueError):
            self.client.redemptions.redirect("red_1", sealed_address="0x01", note_commitment="1", deadline=1, signature="0x")
        self.assertEqual(len(self.server.received), 2)
        typed = zsd.redirect_typed_data(
            chain_id=31337, verifying_contract="0xabc", payout_id=12, nonce=3, deadline=8, note_commitment=99
        )
        self.assertEqual(typed["primaryType"], "Redirect")
        self.assertEqual(typed["domain"]["name"], "ZSD Redemptions")
        self.assertEqual(typed["types"]["Redirect"][1], {"name": "sealedAddress", "type": "bytes"})
        self.assertEqual(
            typed["message"], {"id": 12, "sealedAddress": "0x", "noteCommitment": 99, "nonce": 3, "deadline": 8}
        )

    def test_create_sends_the_specs_clear_address_or_a_sealed_one_exactly_one(self) -> None:
        permit: Any = {"deadline": 9, "v": 27, "r": "0x01", "s": "0x02"}
        self.client.redemptions.create(amount="2.5", withdraw_address=WITHDRAW, owner=OWNER, permit=permit)
        self.client.redemptions.create(amount="2.5", sealed_address="0x01ab", owner=OWNER, permit=permit)
        clear, sealed = self.server.received
        self.assertEqual((clear.method, clear.path), ("POST", "/v1/redeem"))
        self.assertEqual(clear.body, {"amount": "2.5", "withdrawAddress": WITHDRAW, "owner": OWNER, "permit": permit})
        self.assertEqual(sealed.body, {"amount": "2.5", "sealedAddress": "0x01ab", "owner": OWNER, "permit": permit})
        with self.assertRaises(ValueError):
            self.client.redemptions.create(amount="1", owner=OWNER, permit=permit)
        with self.assertRaises(ValueError):
            self.client.redemptions.create(
                amount="1", withdraw_address=WITHDRAW, sealed_address="0x01", owner=OWNER, permit=permit
            )
        self.assertEqual(len(self.server.received), 2)

    def test_redeem_sends_the_amount_it_signed_in_plain_decimal(self) -> None:
        # str(Decimal("0.0000001")) is "1E-7", which the API's amount pattern refuses after the owner signed.
        terms: Dict[str, Any] = {
            "nonce": "0",
            "suggestedDeadline": 1_900_000_000,
            "typedData": {"domain": {}, "types": {}, "primaryType": "Redeem"},
        }
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        # The relay (its seal key) is read once per client.
        self.script(Answer(200, relay_with_seal_key()))
        for given, sent in ((Decimal("0.0000001"), "0.0000001"), (Decimal("1E+2"), "100"), (" 2.50 ", "2.5")):
            with self.subTest(amount=given):
                self.server.received.clear()
                self.script(Answer(200, terms), Answer(201, {"id": "red_1", "status": "pending"}))
                self.client.redeem(amount=given, withdraw_address=WITHDRAW, owner=OWNER, sign=sign, wait=False)
                create = self.server.received[-1]
                self.assertEqual(create.body["amount"], sent)
                self.assertEqual(signed[-1]["message"]["amount"], str(zsd.to_wei(sent)))
        self.assertEqual([r.path for r in self.server.received], ["/v1/redemptions/terms?owner=" + OWNER, "/v1/redeem"])

    def test_redeem_sends_and_signs_the_address_sealed_for_the_owner_only(self) -> None:
        terms: Dict[str, Any] = {"nonce": "4", "suggestedDeadline": 1_900_000_000, "typedData": {"domain": DOMAIN}}
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        self.script(Answer(200, relay_with_seal_key()), Answer(200, terms), Answer(202, {"id": "red_1"}))
        self.client.redeem(amount="5", withdraw_address=WITHDRAW.upper(), owner=OWNER, sign=sign, wait=False)
        create = self.server.received[-1].body
        self.assertEqual(set(create), {"amount", "sealedAddress", "owner", "permit"})
        sealed = create["sealedAddress"]
        self.assertEqual(signed[0]["message"]["sealedAddress"], sealed)
        self.assertEqual(signed[0]["types"]["Redeem"][2], {"name": "minZatOut", "type": "uint256"})
        self.assertEqual(signed[0]["types"]["Redeem"][3], {"name": "sealedAddress", "type": "bytes"})
        # No minimum asked: none signed, none sent.
        self.assertEqual(signed[0]["message"]["minZatOut"], "0")
        self.assertNotIn("minZec", create["permit"])
        self.assertEqual(signed[0]["domain"], DOMAIN)
        # Custody opens it for this owner (the canonical lower-case form), and for no one else.
        self.assertEqual(open_dev(sealed, OWNER), WITHDRAW)
        with self.assertRaises(zsd.seal.SealError):
            open_dev(sealed, "0x" + "1" * 40)
        said = " ".join(str(r.body) + r.path for r in self.server.received).lower()
        self.assertNotIn(WITHDRAW, said)

    def test_redeem_signs_and_sends_its_least_zec(self) -> None:
        terms: Dict[str, Any] = {"nonce": "4", "suggestedDeadline": 1_900_000_000, "typedData": {"domain": DOMAIN}}
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        self.script(Answer(200, relay_with_seal_key()), Answer(200, terms), Answer(202, {"id": "red_1"}))
        self.client.redeem(amount="5", withdraw_address=WITHDRAW, owner=OWNER, sign=sign, min_zec="0.0995", wait=False)
        self.assertEqual(signed[0]["message"]["minZatOut"], "9950000")
        self.assertEqual(self.server.received[-1].body["permit"]["minZec"], "0.0995")
        for bad in ("-1", "0.000000001", "some"):
            with self.subTest(min_zec=bad), self.assertRaises(ValueError):
                self.client.redeem(amount="5", withdraw_address=WITHDRAW, owner=OWNER, sign=sign, min_zec=bad)
        self.assertEqual(len(signed), 1)

    def test_redeem_tells_a_burned_redemptions_payout_progress_as_it_moves(self) -> None:
        # "burned" alone reads as stuck for the quarter minute a payout takes: its stage and confirmations are told.
        terms: Dict[str, Any] = {"nonce": "4", "suggestedDeadline": 1_900_000_000, "typedData": {"domain": DOMAIN}}
        base: Dict[str, Any] = {"object": "redemption", "id": "red_1", "hold": None, "payout": None}

        def burned(stage: str, confirmations: Any) -> Dict[str, Any]:
            payout = {"stage": stage, "confirmations": confirmations, "confirmationsRequired": 3}
            return {**base, "status": "burned", "payout": payout}

        answers = [
            {**base, "status": "requested"},
            burned("confirming", 1),
            burned("confirming", 1),
            burned("confirming", 2),
            burned("paying", 3),
            burned("settling", 3),
            {**base, "status": "paid"},
        ]
        self.script(Answer(200, relay_with_seal_key()), Answer(200, terms), Answer(202, {"id": "red_1"}))
        self.script(*(Answer(200, answer) for answer in answers))
        told: List[zsd.RedemptionProgress] = []

        def sign(_: Any) -> Any:
            return {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        paid = self.client.redeem(
            amount="5", withdraw_address=WITHDRAW, owner=OWNER, sign=sign, on_progress=told.append
        )
        self.assertEqual(paid["status"], "paid")
        # Once per move: the second poll at one confirmation tells nothing new.
        statuses = ["requested"] + ["burned"] * 4 + ["paid"]
        self.assertEqual([(p["id"], p["status"], p["hold"]) for p in told], [("red_1", s, None) for s in statuses])
        self.assertEqual(
            [zsd.describe_payout(p["payout"]) if p["payout"] else p["status"] for p in told],
            [
                "requested",
                "1 of 3 confirmations before custody pays",
                "2 of 3 confirmations before custody pays",
                "custody is paying the ZEC",
                "paid on Zcash, being marked paid on-chain",
                "paid",
            ],
        )
        self.assertEqual(
            zsd.describe_payout({"stage": "confirming", "confirmations": None, "confirmationsRequired": 12}),
            "waiting for 12 confirmations before custody pays",
        )

    def test_a_bad_address_is_refused_before_anything_is_signed_or_sent(self) -> None:
        self.script(Answer(200, relay_with_seal_key()))
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 27, "r": "0x", "s": "0x"}

        for bad in (WITHDRAW[:-1] + "q", "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya"):
            with self.subTest(address=bad), self.assertRaises(zsd.seal.SealError) as caught:
                self.client.redeem(amount="1", withdraw_address=bad, owner=OWNER, sign=sign, wait=False)
            self.assertEqual(caught.exception.code, "invalid_address")
        self.assertEqual(signed, [])
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay"])

    def test_an_unreadable_address_reads_the_key_again_and_seals_once_more(self) -> None:
        terms: Dict[str, Any] = {"nonce": "4", "suggestedDeadline": 1_900_000_000, "typedData": {"domain": DOMAIN}}
        rotated = relay_with_seal_key(key_id=2, public_key=OTHER_PUBLIC)

        def sign(typed: Any) -> Any:
            return {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        unreadable = problem(422, "unreadable_address")
        self.script(Answer(200, relay_with_seal_key()), Answer(200, terms), Answer(422, unreadable))
        self.script(Answer(200, rotated), Answer(200, terms), Answer(202, {"id": "red_1"}))
        self.client.redeem(amount="5", withdraw_address=WITHDRAW, owner=OWNER, sign=sign, wait=False)
        first, second = (r.body["sealedAddress"] for r in self.server.received if r.path == "/v1/redeem")
        self.assertEqual(open_dev(first, OWNER), WITHDRAW)
        self.assertEqual(int(second[4:12], 16), 2)
        # A second refusal is the caller's: no third attempt.
        self.script(Answer(200, terms), Answer(422, unreadable), Answer(200, rotated), Answer(200, terms))
        self.script(Answer(422, unreadable))
        with self.assertRaises(zsd.InvalidRequestError) as caught:
            self.client.redeem(amount="5", withdraw_address=WITHDRAW, owner=OWNER, sign=sign, wait=False)
        self.assertEqual(caught.exception.code, "unreadable_address")
        self.assertEqual(sum(r.path == "/v1/redeem" for r in self.server.received), 4)

    def test_redirect_payout_seals_for_the_owner_and_signs_the_seal_or_the_note(self) -> None:
        terms: Dict[str, Any] = {"nonce": "9", "suggestedDeadline": 1_900_000_000, "typedData": {"domain": DOMAIN}}
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 28, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}

        queued = {"object": "payout_redirect", "status": "queued"}
        self.script(Answer(200, relay_with_seal_key()), Answer(200, terms), Answer(202, queued))
        self.client.redirect_payout("12", owner=OWNER, sign=sign, withdraw_address=WITHDRAW, wait=False)
        self.script(Answer(200, terms), Answer(202, queued))
        self.client.redirect_payout("12", owner=OWNER, sign=sign, note_commitment="77", wait=False)
        to_address, to_note = (r.body for r in self.server.received if r.path == "/v1/redemptions/12/redirect")
        self.assertEqual(set(to_address), {"sealedAddress", "deadline", "signature"})
        self.assertEqual(open_dev(to_address["sealedAddress"], OWNER), WITHDRAW)
        self.assertEqual(to_address["signature"], "0x" + "1" * 64 + "2" * 64 + "1c")
        self.assertEqual(signed[0]["message"]["sealedAddress"], to_address["sealedAddress"])
        self.assertEqual((signed[0]["message"]["id"], signed[0]["message"]["nonce"]), (12, 9))
        self.assertEqual(to_note, {"noteCommitment": "77", "deadline": 1_900_000_000, "signature": to_address["signature"]})
        self.assertEqual((signed[1]["message"]["sealedAddress"], signed[1]["message"]["noteCommitment"]), ("0x", 77))
        with self.assertRaises(ValueError):
            self.client.redirect_payout("12", owner=OWNER, sign=sign)

    def test_without_a_seal_key_the_api_relays_no_payouts(self) -> None:
        self.script(Answer(200, {**relay_with_seal_key(), "sealKey": None}))
        with self.assertRaises(zsd.ZsdError) as caught:
            self.client.seal_address(WITHDRAW, OWNER)
        self.assertEqual(caught.exception.code, "relay_unavailable")

    def test_vote_and_delegate_sign_governance_typed_data_and_send_r_s_v(self) -> None:
        domain = {"name": "ZSD Governor", "version": "1", "chainId": 31337, "verifyingContract": "0x" + "c" * 40}
        token = {**domain, "name": "ZSD Governance", "verifyingContract": "0x" + "d" * 40}
        holder = {"delegationNonce": "3", "domains": {"governor": domain, "token": token}}
        signed: List[Any] = []

        def sign(typed: Any) -> Any:
            signed.append(typed)
            return {"v": 28, "r": "0x" + "1" * 64, "s": "0x" + "2" * 62}

        proposal_id = 2**200 + 5
        self.script(Answer(200, holder), Answer(202, {"object": "vote", "voteId": "vote_1", "status": "queued"}))
        self.client.vote(proposal_id=str(proposal_id), support="against", voter="0xabc", sign=sign, wait=False)
        ballot = signed[-1]
        self.assertEqual(ballot["primaryType"], "Ballot")
        self.assertEqual(ballot["domain"], domain)
        self.assertEqual([f["name"] for f in ballot["types"]["Ballot"]], ["proposalId", "support", "voter", "nonce"])
        # The nonce keyed by the proposal: its low 192 bits, shifted past the 64-bit counter.
        self.assertEqual(ballot["message"], {"proposalId": str(proposal_id), "support": 0, "voter": "0xabc", "nonce": str(5 << 64)})
        sent = self.server.received[-1].body
        self.assertEqual(sent["signature"], "0x" + "1" * 64 + "00" + "2" * 62 + "1c")
        self.assertEqual(sent["nonce"], str(5 << 64))
        self.assertEqual(self.server.received[-2].path, "/v1/governance/holders/0xabc")

        self.script(Answer(200, holder), Answer(202, {"object": "vote", "voteId": "vote_2", "status": "queued"}))
        self.client.vote(proposal_id="7", support="for", voter="0xabc", sign=sign, reason="why", wait=False)
        self.assertEqual(signed[-1]["primaryType"], "ExtendedBallot")
        self.assertEqual(signed[-1]["message"]["params"], "0x")
        self.assertEqual(self.server.received[-1].body["reason"], "why")
        with self.assertRaises(ValueError):
            self.script(Answer(200, holder))
            self.client.vote(proposal_id="7", support="yes", voter="0xabc", sign=sign, wait=False)

        self.script(Answer(200, holder), Answer(202, {"object": "delegation", "delegationId": "dlg_1", "status": "queued"}))
        self.client.delegate_votes(delegator="0xabc", sign=sign, wait=False)
        delegation = signed[-1]
        self.assertEqual(delegation["domain"], token)
        self.assertEqual(delegation["message"]["delegatee"], "0xabc")
        self.assertEqual(delegation["message"]["nonce"], "3")
        body = self.server.received[-1].body
        self.assertEqual((body["delegatee"], body["delegator"], body["nonce"]), ("0xabc", "0xabc", "3"))
        self.assertEqual(str(body["expiry"]), delegation["message"]["expiry"])

    def test_queue_and_execute_wait_for_the_governor_when_asked_and_follow_the_relayed_action(self) -> None:
        pid = str(2**200 + 5)
        queued = {"object": "proposal_action", "actionId": "gact_1", "action": "queue", "status": "queued"}
        confirmed = {**queued, "status": "confirmed", "eta": "2026-03-02T10:21:00.000Z"}
        voting = problem(409, "proposal_not_succeeded", proposalState="active")
        # Still being voted on: refused at once by default, the problem as the API said it.
        self.script(Answer(409, voting))
        with self.assertRaises(zsd.ConflictError) as refused:
            self.client.queue_proposal(pid)
        self.assertEqual(refused.exception.code, "proposal_not_succeeded")
        # With wait_for: asked again each second until voting has ended, then followed until confirmed.
        told: List[zsd.ProposalWait] = []
        self.script(Answer(409, voting), Answer(409, voting), Answer(202, queued), Answer(200, confirmed))
        answer = self.client.queue_proposal(pid, wait_for=60, on_waiting=told.append)
        self.assertEqual(answer, confirmed)
        self.assertEqual([w["proposalState"] for w in told], ["active", "active"])
        self.assertEqual(self.sleeps, [1.0, 1.0])
        self.assertEqual(
            [(r.method, r.path) for r in self.server.received[-4:]],
            [("POST", f"/v1/governance/proposals/{pid}/queue")] * 3 + [("GET", "/v1/governance/actions/gact_1")],
        )
        # A refusal it cannot wait out is raised at once, wait_for or not: an executed proposal is never queued.
        self.script(Answer(409, problem(409, "proposal_not_succeeded", proposalState="executed")))
        with self.assertRaises(zsd.ConflictError):
            self.client.queue_proposal(pid, wait_for=60)

        # An execute waits for the timelock's eta, and says it.
        self.sleeps.clear()
        early = problem(409, "proposal_not_ready", proposalState="queued", eta="2026-03-02T10:21:00.000Z")
        executed = {**queued, "actionId": "gact_2", "action": "execute", "status": "confirmed"}
        self.script(Answer(409, early), Answer(202, {**executed, "status": "queued"}), Answer(200, executed))
        told.clear()
        self.assertEqual(self.client.execute_proposal(pid, wait_for=60, on_waiting=told.append), executed)
        self.assertEqual(told, [{"proposalId": pid, "proposalState": "queued", "eta": "2026-03-02T10:21:00.000Z"}])
        # Not queued yet: nothing to wait for, the caller queues it first.
        self.script(Answer(409, problem(409, "proposal_not_ready", proposalState="succeeded", eta=None)))
        with self.assertRaises(zsd.ConflictError):
            self.client.execute_proposal(pid, wait_for=60)
        # A relayed execute that fails says why, with the governor's code.
        failed = {**executed, "status": "failed", "failureCode": "governor_unexpected_proposal_state", "failureReason": "r"}
        self.script(Answer(202, {**executed, "status": "queued"}), Answer(200, failed))
        with self.assertRaises(zsd.ZsdError) as caught:
            self.client.execute_proposal(pid)
        self.assertEqual(caught.exception.code, "governor_unexpected_proposal_state")
        self.assertIn("Proposal action failed: r", str(caught.exception))

    def test_the_key_is_not_in_the_requestors_repr(self) -> None:
        # A dataclass repr lists every field; a logged requestor (or a debugger's locals) would show the key.
        self.assertNotIn("sk_test_unit", repr(self.client.requestor))
        self.assertIn(self.server.url, repr(self.client.requestor))

    def test_base_url_follows_from_the_key(self) -> None:
        self.assertEqual(zsd.Client("sk_test_x").base_url, "http://127.0.0.1:3000")
        self.assertEqual(zsd.Client("sk_test_x", "https://api.example/v1/").base_url, "https://api.example")
        with self.assertRaises(ValueError):
            zsd.Client("sk_live_x")
        self.assertEqual(zsd.Client("sk_live_x", "https://api.example").base_url, "https://api.example")
        with self.assertRaises(ValueError):
            zsd.Client("pk_nope")

    def test_to_wei_is_exact(self) -> None:
        self.assertEqual(zsd.to_wei("1.5"), 1_500_000_000_000_000_000)
        self.assertEqual(zsd.to_wei("0.000000000000000001"), 1)
        # 29 significant digits: beyond the default decimal context's 28, where a product is rounded.
        self.assertEqual(zsd.to_wei("12345678901.123456789012345679"), 12345678901123456789012345679)
        for bad in ("0", "-1", "1.0000000000000000001", "abc", "NaN", "Infinity", "sNaN", "1e999999"):
            with self.assertRaises(ValueError, msg=bad):
                zsd.to_wei(bad)


MINTER = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
MINTER_DOMAIN = {"name": "ZSD Minter", "version": "1", "chainId": 31337, "verifyingContract": MINTER}
SIGNATURE = {"v": 27, "r": "0x" + "1" * 64, "s": "0x" + "2" * 64}
JOINED = "0x" + "1" * 64 + "2" * 64 + "1b"
PAYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"

# What @zsd/sdk's own builders make of the same domain and message (bigints as decimal strings).
JS_TYPED_DATA = """
import { readFileSync } from "node:fs";
import { closeTypedData, liquidateTypedData, repayTypedData, withdrawCollateralTypedData } from "@zsd/sdk";
const { domain, message } = JSON.parse(readFileSync(0, "utf8"));
const m = Object.fromEntries(
  Object.entries(message).map(([k, v]) => [k, /^[0-9]+$/.test(v) ? BigInt(v) : v]),
);
const d = { chainId: domain.chainId, verifyingContract: domain.verifyingContract };
const all = [
  repayTypedData(d, m),
  withdrawCollateralTypedData(d, m),
  closeTypedData(d, m),
  liquidateTypedData(d, m),
];
console.log(JSON.stringify(all, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
"""


def position_terms(nonce: str = "3", signer: str = OWNER) -> Dict[str, Any]:
    return {
        "object": "position_terms",
        "signer": signer,
        "nonce": nonce,
        "chainTime": 1_899_996_400,
        "suggestedDeadline": 1_900_000_000,
        "domain": MINTER_DOMAIN,
        "types": {},
    }


def open_position(debt: str, collateral: str) -> Dict[str, Any]:
    return {"object": "position", "id": "7", "owner": OWNER, "status": "open", "debt": debt, "collateral": collateral}


def action(status: str, kind: str = "withdraw", **extra: Any) -> Dict[str, Any]:
    return {
        "object": "position_action",
        "actionId": "pact_" + "A" * 20,
        "positionId": "7",
        "action": kind,
        "status": status,
        "failureCode": None,
        "failureReason": None,
        **extra,
    }


class PositionFlowTest(ClientTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.signed: List[Any] = []

    def sign(self, typed: Any) -> Any:
        self.signed.append(typed)
        return SIGNATURE

    def test_withdraw_collateral_seals_for_the_owner_and_signs_what_it_sends(self) -> None:
        self.script(Answer(200, relay_with_seal_key()), Answer(200, position_terms()), Answer(202, action("queued")))
        queued = self.client.withdraw_collateral(
            "7", amount=Decimal("0.50"), withdraw_address=WITHDRAW.upper(), owner=OWNER, sign=self.sign, wait=False
        )
        self.assertEqual(queued["status"], "queued")
        relay, terms, post = self.server.received
        self.assertEqual((relay.path, terms.path), ("/v1/relay", "/v1/positions/terms?signer=" + OWNER))
        self.assertEqual((post.method, post.path), ("POST", "/v1/positions/7/withdraw"))
        sealed = post.body["destination"]["sealedAddress"]
        self.assertEqual(
            post.body,
            {"amount": "0.5", "destination": {"sealedAddress": sealed}, "deadline": 1_900_000_000, "signature": JOINED},
        )
        # Custody opens it for the position's owner, the payout's owner, in its canonical form.
        self.assertEqual(open_dev(sealed, OWNER), WITHDRAW)
        [typed] = self.signed
        self.assertEqual((typed["primaryType"], typed["domain"]), ("WithdrawCollateral", MINTER_DOMAIN))
        self.assertEqual(
            typed["message"],
            {
                "positionId": "7",
                "amountZat": "50000000",
                "sealedAddress": sealed,
                "noteCommitment": "0",
                "nonce": "3",
                "deadline": "1900000000",
            },
        )
        said = " ".join(str(r.body) + r.path for r in self.server.received).lower()
        self.assertNotIn(WITHDRAW, said)

    def test_withdraw_into_a_note_reads_no_seal_key_and_signs_the_commitment(self) -> None:
        commitment = str(2**253 + 1)
        self.script(Answer(200, position_terms()), Answer(202, action("queued")))
        self.client.withdraw_collateral(
            "7", amount="1", note_commitment=int(commitment), owner=OWNER, sign=self.sign, wait=False
        )
        self.assertEqual([r.path for r in self.server.received][0], "/v1/positions/terms?signer=" + OWNER)
        body = self.server.received[-1].body
        self.assertEqual(body["destination"], {"noteCommitment": commitment})
        self.assertEqual(body["amount"], "1")
        message = self.signed[0]["message"]
        self.assertEqual((message["sealedAddress"], message["noteCommitment"]), ("0x", commitment))
        self.assertEqual(message["amountZat"], "100000000")

    def test_close_to_an_address_waits_for_the_action_to_confirm(self) -> None:
        confirmed = action("confirmed", "close", released="3.5", payoutId="12")
        self.script(Answer(200, relay_with_seal_key()), Answer(200, open_position("0", "3.5")))
        self.script(Answer(200, position_terms()))
        self.script(Answer(202, action("queued", "close")), Answer(200, action("submitted", "close")))
        self.script(Answer(200, confirmed))
        closed = self.client.close_position("7", withdraw_address=WITHDRAW, owner=OWNER, sign=self.sign)
        self.assertEqual(closed, confirmed)
        self.assertEqual([r.path for r in self.server.received[:2]], ["/v1/relay", "/v1/positions/7"])
        post = self.server.received[3]
        self.assertEqual(post.path, "/v1/positions/7/close")
        # Bounded at the position as read: nothing to burn, all 3.5 ZEC out.
        self.assertEqual(set(post.body), {"maxDebt", "minZec", "destination", "deadline", "signature"})
        self.assertEqual((post.body["maxDebt"], post.body["minZec"]), ("0", "3.5"))
        sealed = post.body["destination"]["sealedAddress"]
        self.assertEqual(open_dev(sealed, OWNER), WITHDRAW)
        self.assertEqual(self.signed[0]["primaryType"], "Close")
        self.assertEqual(
            self.signed[0]["message"],
            {
                "positionId": "7",
                "maxDebt": "0",
                "minZatOut": "350000000",
                "sealedAddress": sealed,
                "noteCommitment": "0",
                "nonce": "3",
                "deadline": "1900000000",
            },
        )
        self.assertEqual([r.path for r in self.server.received[4:]], ["/v1/position-actions/pact_" + "A" * 20] * 2)
        self.assertEqual(self.sleeps, [1.0])

    def test_close_with_a_payer_repays_the_debt_first_and_waits_for_it(self) -> None:
        position = {"object": "position", "id": "7", "owner": OWNER, "status": "open", "debt": "25.5"}
        repaid = action("confirmed", "repay", amount="25.5")
        self.script(Answer(200, position), Answer(200, position_terms("0", PAYER)))
        self.script(Answer(202, action("queued", "repay")), Answer(200, repaid))
        # Read again once repaid: the close is bounded at what the repayment left.
        self.script(Answer(200, open_position("0", "2")))
        self.script(Answer(200, position_terms("5")), Answer(202, action("queued", "close")))
        self.client.close_position(
            "7", note_commitment="77", owner=OWNER, sign=self.sign, payer=PAYER, sign_payer=self.sign, wait=False
        )
        paths = [r.path for r in self.server.received]
        self.assertEqual(
            paths,
            [
                "/v1/positions/7",
                "/v1/positions/terms?signer=" + PAYER,
                "/v1/positions/7/repay",
                "/v1/position-actions/pact_" + "A" * 20,
                "/v1/positions/7",
                "/v1/positions/terms?signer=" + OWNER,
                "/v1/positions/7/close",
            ],
        )
        self.assertEqual(
            self.server.received[2].body,
            {"amount": "25.5", "payer": PAYER, "deadline": 1_900_000_000, "signature": JOINED},
        )
        repay, close = self.signed
        self.assertEqual(repay["primaryType"], "Repay")
        self.assertEqual(
            repay["message"],
            {"positionId": "7", "maxAmount": str(255 * 10**17), "payer": PAYER, "nonce": "0", "deadline": "1900000000"},
        )
        self.assertEqual(close["primaryType"], "Close")
        self.assertEqual((close["message"]["noteCommitment"], close["message"]["nonce"]), ("77", "5"))
        self.assertEqual((close["message"]["maxDebt"], close["message"]["minZatOut"]), ("0", "200000000"))
        self.assertEqual(self.server.received[-1].body["destination"], {"noteCommitment": "77"})

    def test_close_with_a_payer_repays_nothing_for_a_close_that_cannot_go(self) -> None:
        position = {"object": "position", "id": "7", "owner": OWNER, "status": "open", "debt": "25.5"}
        self.script(Answer(200, relay_with_seal_key()))
        with self.assertRaises(zsd.seal.SealError):
            self.client.close_position(
                "7", withdraw_address=WITHDRAW[:-1] + "q", owner=OWNER, sign=self.sign, payer=PAYER, sign_payer=self.sign
            )
        self.script(Answer(200, position))
        with self.assertRaises(ValueError) as caught:
            self.client.close_position(
                "7", withdraw_address=WITHDRAW, owner=PAYER, sign=self.sign, payer=PAYER, sign_payer=self.sign
            )
        self.assertIn(OWNER, str(caught.exception))
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay", "/v1/positions/7"])
        self.assertEqual(self.signed, [])

    def test_close_without_debt_repays_nothing(self) -> None:
        position = open_position("0", "1.25")
        self.script(Answer(200, position), Answer(200, position))
        self.script(Answer(200, position_terms()), Answer(202, action("queued", "close")))
        self.client.close_position(
            "7", note_commitment="77", owner=OWNER, sign=self.sign, payer=PAYER, sign_payer=self.sign, wait=False
        )
        self.assertEqual([r.path for r in self.server.received][-1], "/v1/positions/7/close")
        self.assertEqual([t["primaryType"] for t in self.signed], ["Close"])

    def test_close_with_given_bounds_signs_them_without_reading_the_position(self) -> None:
        self.script(Answer(200, position_terms()), Answer(202, action("queued", "close")))
        self.client.close_position(
            "7", note_commitment="77", owner=OWNER, sign=self.sign, max_debt="10.5", min_zec="2", wait=False
        )
        self.assertEqual([r.path for r in self.server.received], ["/v1/positions/terms?signer=" + OWNER, "/v1/positions/7/close"])
        body = self.server.received[-1].body
        self.assertEqual((body["maxDebt"], body["minZec"]), ("10.5", "2"))
        message = self.signed[0]["message"]
        self.assertEqual((message["maxDebt"], message["minZatOut"]), (str(105 * 10**17), "200000000"))
        for bad in ({"max_debt": "-1"}, {"min_zec": "0.000000001"}, {"max_debt": "abc"}, {"min_zec": 1.5}):
            with self.subTest(bound=bad), self.assertRaises(ValueError):
                self.client.close_position("7", note_commitment="77", owner=OWNER, sign=self.sign, **bad)  # type: ignore[arg-type]
        self.assertEqual(len(self.signed), 1)

    def test_a_failed_action_raises_with_its_failure_code(self) -> None:
        failed = action("failed", failureCode="position_below_min_ratio", failureReason="under 150%")
        self.script(Answer(200, position_terms()), Answer(202, action("queued")), Answer(200, failed))
        with self.assertRaises(zsd.PositionActionFailedError) as caught:
            self.client.withdraw_collateral("7", amount="1", note_commitment="9", owner=OWNER, sign=self.sign)
        self.assertEqual(caught.exception.code, "position_below_min_ratio")
        self.assertEqual(caught.exception.action, failed)
        self.assertIn("under 150%", str(caught.exception))
        self.client.poll_interval = 0.01
        self.script(Answer(200, action("queued")), Answer(200, action("queued")))
        with self.assertRaises(zsd.WaitTimeoutError):
            self.client.wait_for_position_action("pact_" + "A" * 20, timeout=0.0)

    def test_an_unreadable_address_reseals_with_a_fresh_key_once(self) -> None:
        rotated = relay_with_seal_key(key_id=2, public_key=OTHER_PUBLIC)
        unreadable = problem(422, "unreadable_address")
        flows: List[Tuple[str, Callable[[], Any]]] = [
            (
                "/v1/positions/7/withdraw",
                lambda: self.client.withdraw_collateral(
                    "7", amount="1", withdraw_address=WITHDRAW, owner=OWNER, sign=self.sign, wait=False
                ),
            ),
            (
                "/v1/positions/7/close",
                lambda: self.client.close_position(
                    "7", withdraw_address=WITHDRAW, owner=OWNER, sign=self.sign, wait=False
                ),
            ),
        ]
        for path, flow in flows:
            with self.subTest(path=path):
                self.client.sealer._cached = None  # pyright: ignore[reportPrivateUsage]
                self.server.received.clear()
                self.signed.clear()
                closing = path.endswith("/close")
                # The close reads the position for its bounds, after the address is checked.
                read = [Answer(200, open_position("0", "1"))] if closing else []
                self.script(Answer(200, relay_with_seal_key()), *read, Answer(200, position_terms()))
                self.script(Answer(422, unreadable))
                self.script(Answer(200, rotated), Answer(200, position_terms("3")), Answer(202, action("queued")))
                flow()
                first, second = (r.body["destination"]["sealedAddress"] for r in self.server.received if r.path == path)
                self.assertEqual(open_dev(first, OWNER), WITHDRAW)
                self.assertEqual(int(second[4:12], 16), 2, "sealed to the rotated key")
                self.assertEqual([t["message"]["sealedAddress"] for t in self.signed], [first, second])
                # A second refusal is the caller's: no third attempt.
                self.script(*read, Answer(200, position_terms()), Answer(422, unreadable), Answer(200, rotated))
                self.script(Answer(200, position_terms()), Answer(422, unreadable))
                with self.assertRaises(zsd.InvalidRequestError) as caught:
                    flow()
                self.assertEqual(caught.exception.code, "unreadable_address")
                self.assertEqual(sum(r.path == path for r in self.server.received), 4)

    def test_exactly_one_destination_and_valid_figures_before_anything_is_sent(self) -> None:
        bad: List[Callable[[], Any]] = [
            lambda: self.client.withdraw_collateral("7", amount="1", owner=OWNER, sign=self.sign),
            lambda: self.client.withdraw_collateral(
                "7", amount="1", withdraw_address=WITHDRAW, note_commitment="1", owner=OWNER, sign=self.sign
            ),
            lambda: self.client.close_position("7", owner=OWNER, sign=self.sign),
            lambda: self.client.close_position(
                "7", withdraw_address=WITHDRAW, note_commitment="1", owner=OWNER, sign=self.sign
            ),
            lambda: self.client.close_position("7", note_commitment="1", owner=OWNER, sign=self.sign, payer=PAYER),
        ]
        for commitment in ("0", 0, "-1", "0x1f", "1e3", "²", str(2**254 * 2), True):
            bad.append(
                lambda c=commitment: self.client.withdraw_collateral(
                    "7", amount="1", note_commitment=c, owner=OWNER, sign=self.sign  # type: ignore[arg-type]
                )
            )
        for amount in ("0", "-1", "0.000000001", "abc", "NaN"):
            bad.append(
                lambda a=amount: self.client.withdraw_collateral(
                    "7", amount=a, note_commitment="1", owner=OWNER, sign=self.sign
                )
            )
        for position in ("0", "07", "7/../keys", "²", ""):
            bad.append(
                lambda p=position: self.client.close_position(p, note_commitment="1", owner=OWNER, sign=self.sign)
            )
        for i, call in enumerate(bad):
            with self.subTest(case=i), self.assertRaises(ValueError):
                call()
        self.assertEqual(self.server.received, [])
        self.assertEqual(self.signed, [])

    def test_a_bad_address_is_refused_before_anything_is_signed(self) -> None:
        self.script(Answer(200, relay_with_seal_key()))
        mainnet = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya"
        c = self.client
        for bad in (WITHDRAW[:-1] + "q", mainnet):
            flows: List[Callable[[], Any]] = [
                lambda: c.withdraw_collateral("7", amount="1", withdraw_address=bad, owner=OWNER, sign=self.sign),
                lambda: c.close_position("7", withdraw_address=bad, owner=OWNER, sign=self.sign),
            ]
            for i, flow in enumerate(flows):
                with self.subTest(address=bad, flow=i), self.assertRaises(zsd.seal.SealError) as caught:
                    flow()
                self.assertEqual(caught.exception.code, "invalid_address")
        self.assertEqual(self.signed, [])
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay"])

    def test_the_typed_data_equals_the_javascript_sdks(self) -> None:
        from zsd._positions import TYPES, position_typed_data

        message = {
            "positionId": "7",
            "amount": str(25 * 10**18),
            "amountZat": "150000000",
            "payer": PAYER,
            "sealedAddress": "0x01ab",
            "noteCommitment": str(2**253 + 1),
            "nonce": "3",
            "deadline": "1900000000",
        }
        js = run_node(JS_TYPED_DATA, {"domain": MINTER_DOMAIN, "message": message}, typescript=True)
        self.assertEqual(len(js), len(TYPES))
        for expected in js:
            primary = expected["primaryType"]
            fields = {f["name"] for f in expected["types"][primary]}
            python = position_typed_data(primary, {"chainId": 31337, "verifyingContract": MINTER}, message)
            python["message"] = {k: v for k, v in python["message"].items() if k in fields}
            expected["message"] = {k: v for k, v in expected["message"].items() if k in fields}
            self.assertEqual(python, expected, primary)

    def test_to_zat_is_exact(self) -> None:
        from zsd._positions import plain_zec, to_zat

        self.assertEqual(to_zat("0.00000001"), 1)
        self.assertEqual(to_zat(Decimal("21000000.12345678")), 2_100_000_012_345_678)
        self.assertEqual([plain_zec(z) for z in (1, 10**8, 15 * 10**7)], ["0.00000001", "1", "1.5"])


# The CLI as Client.withdraw_note and Client.notes.owner run it: it prints (or fails with) what the test asks,
# and tells what it was given, so the test checks the arguments and that the note came only in the environment.
WITHDRAWING_CLI = """
const args = process.argv.slice(2);
const seen = { args, note: process.env.ZSD_NOTE, apiKey: process.env.ZSD_API_KEY, baseUrl: process.env.ZSD_BASE_URL };
const fail = process.env.FAKE_FAILURE;
if (fail) {
  console.error(fail);
  process.exit(1);
}
if (args[0] === "note") {
  console.log(JSON.stringify({ address: "0x" + "ab".repeat(20), privateKey: "0x" + "cd".repeat(32), seen }));
} else {
  console.log(JSON.stringify({ object: "withdrawal", withdrawalId: "wdr_1", status: "confirmed", seen }));
}
"""


def withdrawal(status: str, **extra: Any) -> Dict[str, Any]:
    return {
        "object": "withdrawal",
        "withdrawalId": "wdr_4Hn8pQ2rT6vX1zB3cD5f",
        "amount": "0.5",
        "zcashAddress": WITHDRAW,
        "owner": OWNER,
        "status": status,
        "failureCode": None,
        "failureReason": None,
        **extra,
    }


class NoteWithdrawalTest(ClientTestCase):
    NOTE = "zsdnote1secretsecretsecretsecret"

    def setUp(self) -> None:
        super().setUp()
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        cli = Path(directory.name) / "zsd.js"
        cli.write_text(WITHDRAWING_CLI)
        environment = mock.patch.dict(os.environ, {"ZSD_CLI": str(cli)})
        environment.start()
        self.addCleanup(environment.stop)

    def failing(self, line: Dict[str, Any]) -> Any:
        return mock.patch.dict(os.environ, {"FAKE_FAILURE": json.dumps(line)})

    def test_withdraws_through_the_cli_with_the_note_in_its_environment_only(self) -> None:
        self.script(Answer(200, relay_with_seal_key()))
        done: Dict[str, Any] = dict(
            self.client.withdraw_note(
                note=self.NOTE, amount=Decimal("0.50"), withdraw_address=WITHDRAW, note_amount="2", timeout=30.5
            )
        )
        seen = done.pop("seen")
        self.assertEqual(done, {"object": "withdrawal", "withdrawalId": "wdr_1", "status": "confirmed"})
        # Amounts in the plain decimal the CLI takes; the wait in whole seconds, never shorter than asked.
        self.assertEqual(
            seen["args"],
            ["withdraw", "--to", WITHDRAW, "--amount", "0.5", "--note-amount", "2", "--wait", "31", "--json"],
        )
        self.assertEqual(
            (seen["note"], seen["apiKey"], seen["baseUrl"]), (self.NOTE, "sk_test_unit", self.server.url)
        )
        # The address was checked against the relay's network before Node.js ran; nothing else was asked.
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay"])

    def test_without_an_amount_the_whole_note_is_withdrawn(self) -> None:
        self.script(Answer(200, relay_with_seal_key()))
        done: Any = self.client.withdraw_note(note=self.NOTE, amount=None, withdraw_address=WITHDRAW)
        self.assertEqual(done["seen"]["args"], ["withdraw", "--to", WITHDRAW, "--wait", "120", "--json"])

    def test_bad_arguments_are_refused_before_any_request_or_node(self) -> None:
        bad: List[Dict[str, Any]] = [
            {"amount": "0"},
            {"amount": "-1"},
            {"amount": "0.000000001"},
            {"amount": "NaN"},
            {"note_amount": "0"},
            {"note_amount": "1e-9"},
            {"note": ""},
            {"note": "secret"},
            {"timeout": 0},
        ]
        with mock.patch.dict(os.environ, {"ZSD_NODE": "/nonexistent/node"}):
            for change in bad:
                arguments: Dict[str, Any] = {"note": self.NOTE, "amount": "1", "withdraw_address": WITHDRAW}
                arguments.update(change)
                with self.subTest(change=change), self.assertRaises(ValueError) as caught:
                    self.client.withdraw_note(**arguments)
                self.assertNotIn("secret", str(caught.exception), "the note is never echoed")
        self.assertEqual(self.server.received, [])

    def test_a_bad_address_is_refused_before_node_starts(self) -> None:
        mainnet = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya"
        # With no Node.js to run, reaching the CLI would be a NodeNotFoundError, not the SealError.
        self.script(Answer(200, relay_with_seal_key()))
        with mock.patch.dict(os.environ, {"ZSD_NODE": "/nonexistent/node"}):
            for bad in (WITHDRAW[:-1] + "q", mainnet, "tmEZhbWHTpdKMw5it8YDspUXSMGQyFwovpU"):
                with self.subTest(address=bad), self.assertRaises(zsd.seal.SealError) as caught:
                    self.client.withdraw_note(note=self.NOTE, amount="1", withdraw_address=bad)
                self.assertEqual(caught.exception.code, "invalid_address")
        # The relay is read once per client: it says the network (testnet in the sandbox).
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay"])

    def test_a_failed_withdrawal_raises_with_its_own_record(self) -> None:
        failed = withdrawal("failed", failureCode="nullifier_used", failureReason="the note is spent")
        self.script(Answer(200, relay_with_seal_key()), Answer(200, failed))
        line = {"error": "failed", "code": "nullifier_used", "requestId": None, "id": failed["withdrawalId"]}
        with self.failing(line), self.assertRaises(WithdrawalFailedError) as caught:
            self.client.withdraw_note(note=self.NOTE, amount="0.5", withdraw_address=WITHDRAW)
        self.assertEqual(caught.exception.code, "nullifier_used")
        self.assertEqual(caught.exception.withdrawal, failed)
        self.assertIn("the note is spent", str(caught.exception))
        self.assertEqual(self.server.received[-1].path, f"/v1/withdrawals/{failed['withdrawalId']}")

    def test_a_withdrawal_still_unconfirmed_when_the_cli_stops_waiting_is_a_timeout(self) -> None:
        pending = withdrawal("submitted")
        self.script(Answer(200, relay_with_seal_key()), Answer(200, pending))
        line = {"error": "still submitted", "code": "flow_timeout", "requestId": None, "id": pending["withdrawalId"]}
        with self.failing(line), self.assertRaises(zsd.WaitTimeoutError) as caught:
            self.client.withdraw_note(note=self.NOTE, amount="0.5", withdraw_address=WITHDRAW, timeout=5)
        self.assertEqual(caught.exception.code, "flow_timeout")
        self.assertIn(f"{pending['withdrawalId']} is still submitted", str(caught.exception))

    def test_a_refusal_before_anything_was_sent_keeps_the_clis_code(self) -> None:
        self.script(Answer(200, relay_with_seal_key()))
        line = {"error": "no deposit of this note", "code": "deposit_not_found", "requestId": "req_1"}
        with self.failing(line), self.assertRaises(zsd.ProverError) as caught:
            self.client.withdraw_note(note=self.NOTE, amount="0.5", withdraw_address=WITHDRAW)
        self.assertEqual((caught.exception.code, caught.exception.request_id), ("deposit_not_found", "req_1"))
        self.assertEqual([r.path for r in self.server.received], ["/v1/relay"])

    def test_notes_owner_runs_note_owner_with_the_note_in_its_environment(self) -> None:
        owner: Dict[str, Any] = dict(self.client.notes.owner(self.NOTE))
        seen = owner.pop("seen")
        self.assertEqual(owner, {"address": "0x" + "ab" * 20, "privateKey": "0x" + "cd" * 32})
        self.assertEqual((seen["args"], seen["note"]), (["note", "owner", "--json"], self.NOTE))
        with self.assertRaises(ValueError):
            self.client.notes.owner("")
        self.assertEqual(self.server.received, [], "the owner is derived locally")


# Binary downloads the prover fetches, and the health checks: not the SDK's business.
NOT_IN_THE_SDK = {"getHealth", "getReadiness", "getCircuitWasm", "getCircuitProvingKey"}


class CoverageTest(ClientTestCase):
    def test_every_operation_of_the_document_has_a_method(self) -> None:
        self.server.default = Answer(200, {"data": [], "next": None, "mintId": "m", "proofId": "p"})
        c = self.client
        a = "agt_1"
        calls: List[Callable[[], Any]] = [
            lambda: c.keys.create("k"),
            c.keys.list,
            lambda: c.keys.revoke("key_1"),
            c.ledger.supply,
            c.ledger.collateral,
            c.ledger.reserves,
            c.ledger.peg_price,
            c.ledger.pending_leaves,
            lambda: c.ledger.balances("0x1"),
            lambda: list(c.ledger.all_deposit_leaves()),
            lambda: c.ledger.deposit("dep_1"),
            c.relay.retrieve,
            lambda: c.relay.anonymity("3.1"),
            lambda: c.proofs.submit(
                {"proof": {}, "publicSignals": [], "mintAmount": "1", "recipient": "0x"}  # type: ignore[typeddict-item]
            ),
            lambda: c.proofs.retrieve("prf_1"),
            lambda: c.proofs.nullifier("123"),
            lambda: c.mints.create(proof_id="prf_1", amount="1", recipient="0x1"),
            lambda: c.mints.retrieve("mint_1"),
            lambda: c.redemptions.terms("0x1"),
            lambda: c.redemptions.create(
                amount="1", sealed_address="0x01", owner="0x1", permit={"deadline": 1, "v": 27, "r": "0x", "s": "0x"}
            ),
            lambda: c.redemptions.retrieve("red_1"),
            lambda: c.redemptions.redirect("red_1", sealed_address="0x01", deadline=1, signature="0x"),
            lambda: c.redemptions.retrieve_redirect("red_1"),
            lambda: c.positions.retrieve("7"),
            lambda: c.positions.terms("0x1"),
            lambda: c.positions.repay("7", {"amount": "1", "payer": "0x1", "deadline": 1, "signature": "0x"}),
            lambda: c.positions.withdraw(
                "7", {"amount": "1", "destination": {"sealedAddress": "0x01"}, "deadline": 1, "signature": "0x"}
            ),
            lambda: c.positions.close(
                "7",
                {
                    "maxDebt": "1",
                    "minZec": "1",
                    "destination": {"noteCommitment": "1"},
                    "deadline": 1,
                    "signature": "0x",
                },
            ),
            lambda: c.positions.liquidate(
                "7",
                {
                    "liquidator": "0x1",
                    "maxDebt": "1",
                    "minSeizedZec": "1",
                    "minSeizedValue": "1",
                    "destination": {"sealedAddress": "0x01"},
                    "deadline": 1,
                    "signature": "0x",
                },
            ),
            lambda: c.positions.top_up("7", {"proof": {}, "publicSignals": []}),  # type: ignore[typeddict-item]
            lambda: c.positions.action("7", "pact_1"),
            lambda: c.positions.action_by_id("pact_1"),
            lambda: c.withdrawals.create(
                {"proof": {}, "publicSignals": [], "zcashAddress": "z", "owner": "0x1"}  # type: ignore[typeddict-item]
            ),
            lambda: c.withdrawals.retrieve("wdr_1"),
            c.sandbox.price,
            lambda: c.sandbox.set_price(price="50"),
            lambda: c.sandbox.deposit(amount="1", note_commitment="1"),
            lambda: c.agents.register(name="n", webhook_url="http://x", events=["mint.confirmed"], role="observer"),
            c.agents.list,
            lambda: c.agents.retrieve(a),
            lambda: c.agents.update(a, {"name": "m"}),
            lambda: c.agents.delete(a),
            lambda: c.agents.rotate_secret(a),
            lambda: c.agents.test(a),
            lambda: c.agents.deliveries(a),
            lambda: c.agents.retry_deliveries(a, since="2026-01-01T00:00:00Z"),
            lambda: c.agents.retry_delivery(a, "dlv_1"),
            lambda: c.alerts.create(
                {
                    "agentId": a,
                    "subject": {"type": "mint", "id": "m"},
                    "severity": "low",
                    "category": "c",
                    "reason": "r",
                }
            ),
            c.alerts.list,
            lambda: c.alerts.retrieve("alr_1"),
            lambda: c.alerts.update("alr_1", {"agentId": a, "status": "in_review"}),
            lambda: c.alerts.release("alr_1", agent_id=a),
            lambda: c.alerts.reject("alr_1", agent_id=a, reason_code="r"),
            lambda: c.alerts.verdict({"agentId": a, "subject": {"type": "mint", "id": "m"}, "verdict": "PASSED"}),
        ]
        calls += governance_calls(c)
        for call in calls:
            call()
        covered: Set[str] = set()
        for received in self.server.received:
            path = received.path.split("?")[0]
            for operation_id, (method, template) in types.OPERATIONS.items():
                pattern = "^" + re.sub(r"\\\{[A-Za-z]+\\\}", "[^/]+", re.escape(template)) + "$"
                if method == received.method and re.match(pattern, path):
                    covered.add(operation_id)
        missing = set(types.OPERATIONS) - NOT_IN_THE_SDK - covered
        self.assertEqual(missing, set(), "operations of the OpenAPI document without a method in the SDK")


def governance_calls(c: zsd.Client) -> List[Callable[[], Any]]:
    g = c.governance
    signature = "0x" + "11" * 65
    return [
        g.retrieve,
        lambda: g.proposals(state="active"),
        lambda: g.proposal("1"),
        lambda: g.proposal_votes("1"),
        lambda: g.holder("0x1"),
        lambda: g.cast_vote({"proposalId": "1", "support": "for", "voter": "0x1", "signature": signature}),
        lambda: g.vote("vote_1"),
        lambda: g.delegate({"delegatee": "0x1", "delegator": "0x1", "nonce": "0", "expiry": 1, "signature": signature}),
        lambda: g.delegation("dlg_1"),
        lambda: g.queue("1"),
        lambda: g.execute("1"),
        lambda: g.action("gact_1"),
    ]


if __name__ == "__main__":
    unittest.main()
