"""The SDK against the real stack (scripts/test-stack.ts): chain, contracts, indexer, API and its workers."""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

import zsd

from .helpers import run_node
from .stack import hardhat_account, sign_with_viem, stack

# A wallet calling Redemptions.redeem itself (no API), with an address sealed for another owner.
REDEEM_ON_CHAIN = """
import { readFileSync } from "node:fs";
import { createPublicClient, createWalletClient, http, parseEventLogs } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { redemptionsAbi, sealAddress } from "@zsd/sdk";
const a = JSON.parse(readFileSync(0, "utf8"));
const account = mnemonicToAccount("test test test test test test test test test test test junk", {
  addressIndex: a.index,
});
const chain = {
  id: a.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [a.rpcUrl] } },
};
const transport = http(a.rpcUrl);
const sealed = sealAddress(
  { keyId: a.keyId, publicKey: a.publicKey },
  { chainId: a.chainId, redemptions: a.redemptions, owner: a.sealedFor },
  a.address,
  "testnet",
);
const hash = await createWalletClient({ account, chain, transport }).writeContract({
  address: a.redemptions,
  abi: redemptionsAbi,
  functionName: "redeem",
  args: [BigInt(a.amount), sealed],
});
const receipt = await createPublicClient({ chain, transport }).waitForTransactionReceipt({ hash });
const [requested] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
console.log(JSON.stringify({ id: requested.args.id.toString() }));
"""

WITHDRAW_ADDRESS = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez"

# The proposer's own wallet sending Governor.propose (the SDK sends no transactions): the JS SDK's propose.
PROPOSE = """
import { readFileSync } from "node:fs";
import { mnemonicToAccount } from "viem/accounts";
import { Zsd } from "@zsd/sdk/client";
const a = JSON.parse(readFileSync(0, "utf8"));
const account = mnemonicToAccount("test test test test test test test test test test test junk", {
  addressIndex: a.index,
});
const zsd = new Zsd(a.apiKey, { baseUrl: a.baseUrl });
const proposed = await zsd.propose({ account, title: a.title, calls: a.calls, rpcUrl: a.rpcUrl });
console.log(JSON.stringify(proposed));
"""


def chain_rpc(method: str, params: List[Any]) -> Any:
    """A JSON-RPC call to the stack's Hardhat node (a test moving the chain's clock)."""
    request = urllib.request.Request(
        stack().rpc_url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["result"]

Delivery = Tuple[bytes, Dict[str, str]]


def client() -> zsd.Client:
    running = stack()
    return zsd.Client(running.api_key, running.base_url, poll_interval=0.2)


class GovernanceTest(unittest.TestCase):
    """A parameter changed by governance from Python: delegated, proposed, voted, then queued and executed by the relay."""

    def test_a_succeeded_proposal_is_queued_and_executed_through_the_relay_and_its_change_shows(self) -> None:
        c = client()
        # Hardhat's account #0 holds every governance token of a local deployment.
        holder = hardhat_account(0)

        def sign(typed_data: zsd.TypedData) -> Dict[str, str]:
            return sign_with_viem("typed", {"index": 0, "typedData": typed_data})

        c.delegate_votes(delegator=holder, sign=sign)
        self.assertEqual((c.relay.retrieve()["minting"] or {})["maxPriceAgeSeconds"], 3600)
        proposed = run_node(
            PROPOSE,
            {
                "index": 0,
                "apiKey": stack().api_key,
                "baseUrl": stack().base_url,
                "rpcUrl": stack().rpc_url,
                "title": "Accept prices up to 30 minutes old",
                "calls": ["PriceFeed.setMaxPriceAge(1800)"],
            },
            typescript=True,
        )
        pid = proposed["proposalId"]
        # Voting opens a block after the snapshot: the stack mines one every half second.
        status = None
        for _ in range(60):
            try:
                status = c.vote(proposal_id=pid, support="for", voter=holder, sign=sign)["status"]
                break
            except zsd.ConflictError as error:
                if error.code != "proposal_not_active":
                    raise
                c.sleep(0.5)
        self.assertEqual(status, "confirmed")
        # Voting lasts 20 blocks (10 s here): refused until then, unless the client waits.
        with self.assertRaises(zsd.ConflictError) as early:
            c.queue_proposal(pid)
        self.assertEqual(early.exception.code, "proposal_not_succeeded")
        waited: List[zsd.ProposalWait] = []
        queued = c.queue_proposal(pid, wait_for=120, on_waiting=waited.append)
        self.assertEqual(queued["status"], "confirmed")
        self.assertIsNotNone(queued["eta"])
        self.assertTrue(waited and waited[0]["proposalState"] == "active", waited)
        # In the timelock for a minute: refused before its eta, which the problem gives.
        with self.assertRaises(zsd.ConflictError) as soon:
            c.execute_proposal(pid)
        self.assertEqual(((soon.exception.problem or {}).get("eta"), soon.exception.code), (queued["eta"], "proposal_not_ready"))
        # The minute passes at once on this chain (a test's shortcut for waiting it out).
        chain_rpc("evm_increaseTime", [61])
        chain_rpc("evm_mine", [])
        executed = c.execute_proposal(pid, wait_for=30)
        self.assertEqual((executed["action"], executed["status"]), ("execute", "confirmed"))
        self.assertEqual((c.relay.retrieve()["minting"] or {})["maxPriceAgeSeconds"], 1800)


class LedgerTest(unittest.TestCase):
    def test_reads_supply_collateral_peg_balances_and_relay(self) -> None:
        c = client()
        supply = c.ledger.supply()
        self.assertEqual((supply["object"], supply["symbol"], supply["decimals"]), ("supply", "ZSD", 18))
        self.assertGreater(supply["asOfBlock"], 0)
        collateral = c.ledger.collateral()
        self.assertEqual(collateral["asset"], "ZEC")
        Decimal(collateral["outstandingZec"])
        peg = c.ledger.peg_price()
        self.assertGreater(Decimal(peg["zecUsd"]), 0)
        nobody = "0x" + "ab" * 20
        self.assertEqual(c.ledger.balances(nobody)["balances"][0]["amount"], "0")
        relay = c.relay.retrieve()
        self.assertEqual(relay["environment"], "sandbox")
        self.assertRegex(relay["relayer"] or "", r"^0x[0-9a-fA-F]{40}$")

    def test_a_deposit_shows_in_the_whole_leaf_list(self) -> None:
        c = client()
        deposit = c.sandbox.deposit(amount="0.5", note_commitment=str(uuid.uuid4().int))
        # The list is the indexer's: it follows the chain a moment behind.
        leaves: Dict[int, str] = {}
        for _ in range(60):
            leaves = {leaf["index"]: leaf["leaf"] for leaf in c.ledger.all_deposit_leaves()}
            if deposit["leafIndex"] in leaves:
                break
            c.sleep(0.5)
        self.assertEqual(leaves.get(deposit["leafIndex"]), deposit["leaf"])
        self.assertEqual(sorted(leaves), list(range(len(leaves))), "every leaf, in tree order")


class ErrorsTest(unittest.TestCase):
    def test_a_wrong_key_is_an_authentication_error_with_its_request_id(self) -> None:
        wrong = zsd.Client("sk_test_" + "x" * 48, stack().base_url)
        with self.assertRaises(zsd.AuthenticationError) as raised:
            wrong.ledger.supply()
        self.assertEqual(raised.exception.code, "invalid_api_key")
        self.assertRegex(raised.exception.request_id or "", r"^req_")

    def test_an_unknown_mint_is_not_found(self) -> None:
        with self.assertRaises(zsd.NotFoundError) as raised:
            client().mints.retrieve("mint_" + "A" * 20)
        self.assertEqual(raised.exception.code, "resource_not_found")

    def test_invalid_fields_are_named(self) -> None:
        with self.assertRaises(zsd.InvalidRequestError) as raised:
            client().sandbox.deposit(amount="1.123456789", note_commitment="1")
        self.assertEqual([e["field"] for e in raised.exception.errors], ["body.amount"])

    def test_an_idempotency_key_replays_its_answer_and_refuses_another_body(self) -> None:
        c = client()
        key = f"python-e2e-{uuid.uuid4()}"
        commitment = str(uuid.uuid4().int)
        first = c.sandbox.deposit(amount="0.25", note_commitment=commitment, idempotency_key=key)
        again = c.sandbox.deposit(amount="0.25", note_commitment=commitment, idempotency_key=key)
        self.assertEqual(again, first)
        with self.assertRaises(zsd.IdempotencyError) as raised:
            c.sandbox.deposit(amount="0.3", note_commitment=commitment, idempotency_key=key)
        self.assertEqual(raised.exception.code, "idempotency_key_reused")
        self.assertEqual(raised.exception.status, 422)


class Receiver:
    """A webhook endpoint on 127.0.0.1 that keeps each delivery's raw body and headers."""

    def __init__(self) -> None:
        self.deliveries: "queue.Queue[Delivery]" = queue.Queue()
        deliveries = self.deliveries

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                deliveries.put((body, {k.lower(): v for k, v in self.headers.items()}))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=lambda: self.server.serve_forever(poll_interval=0.05), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class AgentsTest(unittest.TestCase):
    def test_a_delivery_signed_by_the_api_verifies_and_a_rotated_secret_signs_with_both(self) -> None:
        c = client()
        receiver = Receiver()
        self.addCleanup(receiver.close)
        agent = c.agents.register(
            name="python e2e", webhook_url=receiver.url, events=["mint.confirmed"], role="observer"
        )
        self.addCleanup(lambda: c.agents.delete(agent["agentId"]))
        secret = agent["secret"]
        self.assertEqual(agent["agentId"], c.agents.retrieve(agent["agentId"])["agentId"])
        self.assertIn(agent["agentId"], [a["agentId"] for a in c.agents.list()["data"]])

        c.agents.test(agent["agentId"])
        body, headers = receiver.deliveries.get(timeout=30)
        assert secret is not None, "a registration shows the secret"
        event = zsd.Webhook(secret).verify(body, headers)
        self.assertEqual(event["type"], "ping")
        self.assertEqual(event["data"]["agentId"], agent["agentId"])
        with self.assertRaises(zsd.WebhookVerificationError):
            zsd.Webhook(secret).verify(body.replace(b"ping", b"pong"), headers)

        new_secret = c.agents.rotate_secret(agent["agentId"])["secret"]
        assert new_secret is not None, "a rotation shows the new secret"
        self.assertNotEqual(new_secret, secret)
        c.agents.test(agent["agentId"])
        body, headers = receiver.deliveries.get(timeout=30)
        self.assertEqual(len(headers["webhook-signature"].split(" ")), 2)
        for each in (secret, new_secret):
            self.assertEqual(zsd.Webhook(each).verify(body, headers)["type"], "ping")

        deliveries = c.agents.deliveries(agent["agentId"])
        self.assertGreaterEqual(len(deliveries["data"]), 2)


class RecordingProxy:
    """Forwards to the API and keeps every request (method, path with query, body) the client side made."""

    HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}

    def __init__(self, upstream: str) -> None:
        self.requests: List[Tuple[str, str, bytes]] = []
        requests = self.requests
        hop_by_hop = self.HOP_BY_HOP

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                requests.append((self.command, self.path, body))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in hop_by_hop}
                request = urllib.request.Request(
                    upstream + self.path, data=body or None, headers=headers, method=self.command
                )
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, answer_headers, payload = answer.status, answer.headers, answer.read()
                except urllib.error.HTTPError as answer:
                    status, answer_headers, payload = answer.code, answer.headers, answer.read()
                self.send_response(status)
                for name, value in answer_headers.items():
                    if name.lower() not in hop_by_hop:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _forward
            do_POST = _forward
            do_DELETE = _forward

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=lambda: self.server.serve_forever(poll_interval=0.05), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class PrivacyTest(unittest.TestCase):
    def test_a_mint_reads_the_whole_leaf_list_and_sends_nothing_of_the_note(self) -> None:
        proxy = RecordingProxy(stack().base_url)
        self.addCleanup(proxy.close)
        c = zsd.Client(stack().api_key, proxy.url, poll_interval=0.2)
        owner = hardhat_account(10)
        # Other deposits around ours: a tree of one leaf has that leaf for its root, which every proof shows.
        c.sandbox.deposit(amount="1", note_commitment=str(uuid.uuid4().int))
        note = c.notes.create()
        deposit = c.sandbox.deposit(amount="2", note_commitment=note["noteCommitment"])
        c.sandbox.deposit(amount="3", note_commitment=str(uuid.uuid4().int))
        start = len(proxy.requests)

        self.assertEqual(c.mint(note=note["note"], amount="10", recipient=owner)["status"], "confirmed")

        made = proxy.requests[start:]
        leaf_reads = [urllib.parse.urlsplit(path) for _, path, _ in made if "/deposits" in path]
        self.assertTrue(leaf_reads, "the prover rebuilt the tree from the API's leaf list")
        for read in leaf_reads:
            self.assertEqual(read.path, "/v1/deposits/leaves", "only the whole list, never one deposit's leaf")
        self.assertIn(urllib.parse.parse_qs(leaf_reads[0].query).get("from", ["0"]), [["0"]])
        secrets = [note["note"], note["noteCommitment"], deposit["leaf"], hex(int(note["noteCommitment"]))[2:]]
        for method, path, body in made:
            sent = urllib.parse.unquote(path) + body.decode("utf-8", "replace")
            for secret in secrets:
                self.assertNotIn(secret.lower(), sent.lower(), f"{method} {path} carries the note or its deposit")
        self.assertIn("/v1/proofs/submit", [path for _, path, _ in made])


class MintAndRedeemTest(unittest.TestCase):
    """The whole flow from Python: the proof is made by the JavaScript CLI, never handled here."""

    def test_mints_to_confirmed_and_redeems_to_paid(self) -> None:
        c = client()
        owner = hardhat_account(7)
        before = Decimal(c.ledger.balances(owner)["balances"][0]["amount"])

        note = c.notes.create()
        self.assertTrue(note["note"].startswith("zsdnote1"))
        c.sandbox.deposit(amount="3", note_commitment=note["noteCommitment"])
        # A minimum above every deposit of the stack: the prover counts the candidates, the
        # client hands the warning over, and the mint goes on.
        strict = zsd.Client(stack().api_key, stack().base_url, poll_interval=0.2, min_anonymity=1000)
        told: List[zsd.AnonymityWarning] = []
        mint = strict.mint(note=note["note"], amount="60", recipient=owner, on_warning=told.append)
        self.assertEqual(mint["status"], "confirmed")
        self.assertEqual([(w["code"], w["minimum"]) for w in told], [("small_anonymity_set", 1000)])
        self.assertGreaterEqual(told[0]["candidates"] or 0, 1, "this note's own deposit reaches its floor")
        self.assertIn(f"proving {told[0]['floor']} ZEC", told[0]["message"])
        self.assertEqual((mint["amount"], mint["recipient"]), ("60", owner))
        # The same note cannot mint twice: its nullifier is spent.
        with self.assertRaises(zsd.ZsdError):
            c.mint(note=note["note"], amount="1", recipient=owner)

        relay = c.relay.retrieve()
        contracts = relay["contracts"] or {}
        # The sandbox's public development key opens what the SDK sealed: custody's view.
        dev_secret = "0x" + hashlib.sha256(b"zsd development seal key 1").hexdigest()

        def sign(typed_data: zsd.TypedData) -> Dict[str, str]:
            self.assertEqual(typed_data["message"]["owner"], owner)
            self.assertEqual(typed_data["message"]["amount"], str(20 * 10**18))
            sealed = typed_data["message"]["sealedAddress"]
            self.assertNotIn(WITHDRAW_ADDRESS, str(typed_data))
            opened = zsd.seal.open_sealed_address(
                [(1, dev_secret)],
                chain_id=relay["chainId"] or 0,
                redemptions=contracts["Redemptions"]["address"],
                owner=owner,
                sealed=sealed,
            )
            self.assertEqual(opened, WITHDRAW_ADDRESS)
            return sign_with_viem("typed", {"index": 7, "typedData": typed_data})

        redemption = c.redeem(amount="20", withdraw_address=WITHDRAW_ADDRESS, owner=owner, sign=sign)
        self.assertEqual(redemption["status"], "paid")
        # The owner's own answer shows the address custody opened and paid.
        self.assertEqual(redemption["withdrawAddress"], WITHDRAW_ADDRESS)
        self.assertGreater(Decimal(redemption["zecDue"] or "0"), 0)
        self.assertEqual(c.redemptions.retrieve(redemption["id"])["status"], "paid")
        # Ledger reads come from the indexer: wait for it to see the burn.
        after = before
        for _ in range(60):
            after = Decimal(c.ledger.balances(owner)["balances"][0]["amount"])
            if after == before + 40:
                break
            c.sleep(0.5)
        self.assertEqual(after, before + 40)

    def test_a_payout_custody_cannot_read_is_held_and_redirected_to_a_sealed_address(self) -> None:
        c = client()
        owner = hardhat_account(10)
        note = c.notes.create()
        c.sandbox.deposit(amount="2", note_commitment=note["noteCommitment"])
        mint = c.mint(note=note["note"], amount="20", recipient=owner, on_warning=lambda _: None)
        self.assertEqual(mint["status"], "confirmed")
        relay = c.relay.retrieve()
        key = relay["sealKey"]
        assert key is not None
        # The owner's own wallet redeems on-chain with an address sealed for someone else: the contract takes
        # it (it cannot tell), custody cannot open it for this owner and fails it as unreadable_address.
        sent = run_node(
            REDEEM_ON_CHAIN,
            {
                "rpcUrl": stack().rpc_url,
                "chainId": relay["chainId"],
                "redemptions": (relay["contracts"] or {})["Redemptions"]["address"],
                "index": 10,
                "sealedFor": hardhat_account(11),
                "address": WITHDRAW_ADDRESS,
                "keyId": key["keyId"],
                "publicKey": key["publicKey"],
                "amount": str(5 * 10**18),
            },
            typescript=True,
        )
        payout_id = str(sent["id"])

        def sign(typed_data: zsd.TypedData) -> Dict[str, str]:
            return sign_with_viem("typed", {"index": 10, "typedData": typed_data})

        redirect = None
        for _ in range(100):
            try:
                redirect = c.redirect_payout(payout_id, owner=owner, sign=sign, withdraw_address=WITHDRAW_ADDRESS)
                break
            except zsd.ConflictError as error:
                self.assertEqual(error.code, "payout_not_failed")
                c.sleep(0.2)
        assert redirect is not None, "the payout was never failed"
        self.assertEqual((redirect["status"], redirect["destination"]), ("confirmed", {"withdrawAddress": WITHDRAW_ADDRESS}))
        for _ in range(100):
            redirect = c.redemptions.retrieve_redirect(payout_id)
            if redirect["payoutStatus"] == "paid":
                break
            c.sleep(0.2)
        self.assertEqual(redirect["payoutStatus"], "paid")

    def test_a_wrong_signature_fails_the_redemption_with_a_problem(self) -> None:
        c = client()
        owner = hardhat_account(8)

        def sign_as_someone_else(typed_data: zsd.TypedData) -> Dict[str, str]:
            return sign_with_viem("typed", {"index": 9, "typedData": typed_data})

        with self.assertRaises(zsd.ZsdError) as raised:
            c.redeem(amount="1", withdraw_address=WITHDRAW_ADDRESS, owner=owner, sign=sign_as_someone_else)
        self.assertEqual(raised.exception.code, "invalid_signature")


# A wallet holding a private key (here the position owner key client.notes.owner derives from the note): its
# signature of typed data, whose uint fields arrive as decimal strings.
SIGN_WITH_KEY = """
import { readFileSync } from "node:fs";
import { parseSignature } from "viem";
import { privateKeyToAccount } from "viem/accounts";
const { privateKey, typedData } = JSON.parse(readFileSync(0, "utf8"));
const fields = typedData.types[typedData.primaryType];
const message = Object.fromEntries(Object.entries(typedData.message).map(([name, value]) => {
  const type = fields.find((f) => f.name === name)?.type ?? "";
  return [name, type.startsWith("uint") ? BigInt(value) : value];
}));
const { v, r, s } = parseSignature(await privateKeyToAccount(privateKey).signTypedData({ ...typedData, message }));
console.log(JSON.stringify({ v: Number(v), r, s }));
"""

# A payout as the Redemptions contract records it (status 2: Completed, custody paid it).
READ_PAYOUT = """
import { readFileSync } from "node:fs";
import { createPublicClient, http } from "viem";
import { redemptionsAbi } from "@zsd/sdk";
const a = JSON.parse(readFileSync(0, "utf8"));
const chain = createPublicClient({ transport: http(a.rpcUrl) });
const r = await chain.readContract({
  address: a.redemptions,
  abi: redemptionsAbi,
  functionName: "getPayout",
  args: [BigInt(a.id)],
});
console.log(JSON.stringify({ owner: r.owner, status: Number(r.status), zatDue: r.zatDue.toString() }));
"""


def settled_payout(c: zsd.Client, payout_id: str) -> Dict[str, Any]:
    """The payout as the chain records it once custody has settled it (or after 30 s, still requested)."""
    redemptions = (c.relay.retrieve()["contracts"] or {})["Redemptions"]["address"]
    payout: Dict[str, Any] = {}
    for _ in range(60):
        payout = run_node(
            READ_PAYOUT, {"rpcUrl": stack().rpc_url, "redemptions": redemptions, "id": payout_id}, typescript=True
        )
        if payout["status"] != 1:
            break
        c.sleep(0.5)
    return payout


class PositionFlowTest(unittest.TestCase):
    """From Python: a position's collateral out to a sealed address, then closed to it."""

    def test_withdraws_collateral_then_closes_to_a_zcash_address_and_custody_pays_both(self) -> None:
        c = client()
        payer = hardhat_account(12)
        note = c.notes.create()
        c.sandbox.deposit(amount="3", note_commitment=note["noteCommitment"])
        # The whole note as collateral (the prover's default floor is what the mint needs, less).
        mint = c.mint(note=note["note"], amount="40", recipient=payer, floor="3", on_warning=lambda _: None)
        self.assertEqual(mint["status"], "confirmed")
        position_id = mint["positionId"]
        assert position_id is not None
        owner_key = c.notes.owner(note["note"])
        owner = owner_key["address"]
        position = c.positions.retrieve(position_id)
        self.assertEqual((position["owner"], position["collateral"], position["debt"]), (owner, "3", "40"))
        signed: List[str] = []

        def sign_as_owner(typed_data: zsd.TypedData) -> Dict[str, str]:
            primary = typed_data["primaryType"]
            signed.append(primary)
            # The SDK's own types are the ones the API publishes for the minter.
            self.assertEqual(typed_data["types"][primary], c.positions.terms(owner)["types"][primary])
            self.assertNotIn(WITHDRAW_ADDRESS, str(typed_data))
            return run_node(SIGN_WITH_KEY, {"privateKey": owner_key["privateKey"], "typedData": typed_data})

        def sign_as_payer(typed_data: zsd.TypedData) -> Dict[str, str]:
            signed.append(typed_data["primaryType"])
            return sign_with_viem("typed", {"index": 12, "typedData": typed_data})

        withdrawn = c.withdraw_collateral(
            position_id, amount="0.5", withdraw_address=WITHDRAW_ADDRESS, owner=owner, sign=sign_as_owner
        )
        self.assertEqual(
            (withdrawn["action"], withdrawn["status"], withdrawn["released"]), ("withdraw", "confirmed", "0.5")
        )
        self.assertEqual(c.positions.retrieve(position_id)["collateral"], "2.5")

        closed = c.close_position(
            position_id,
            withdraw_address=WITHDRAW_ADDRESS,
            owner=owner,
            sign=sign_as_owner,
            payer=payer,
            sign_payer=sign_as_payer,
        )
        self.assertEqual((closed["action"], closed["status"], closed["released"]), ("close", "confirmed", "2.5"))
        self.assertEqual(signed, ["WithdrawCollateral", "Repay", "Close"])
        after = c.positions.retrieve(position_id)
        self.assertEqual((after["status"], Decimal(after["debt"]), Decimal(after["collateral"])), ("closed", 0, 0))

        # Custody opened each sealed address (for the position's owner) and paid it: the chain records both
        # payouts as completed, for the owner, with the ZEC the position released.
        for done, zat in ((withdrawn, 50_000_000), (closed, 250_000_000)):
            payout_id = done["payoutId"]
            assert payout_id is not None, f"{done['action']} made no payout"
            payout = settled_payout(c, payout_id)
            self.assertEqual(payout, {"owner": owner, "status": 2, "zatDue": str(zat)}, done["action"])
            shown = c.positions.action_by_id(done["actionId"])
            self.assertEqual(shown["destination"], {"zcashAddress": WITHDRAW_ADDRESS})


class NoteWithdrawalTest(unittest.TestCase):
    """From Python: part of a deposit note's ZEC out to a sealed Zcash address."""

    def test_withdraws_part_of_a_note_to_a_zcash_address_and_custody_pays_the_notes_owner(self) -> None:
        c = client()
        note = c.notes.create()
        c.sandbox.deposit(amount="2", note_commitment=note["noteCommitment"])
        with self.assertRaises(zsd.seal.SealError):
            c.withdraw_note(note=note["note"], amount="0.5", withdraw_address=WITHDRAW_ADDRESS[:-1] + "q")

        withdrawal = c.withdraw_note(note=note["note"], amount="0.5", withdraw_address=WITHDRAW_ADDRESS)
        owner = c.notes.owner(note["note"])["address"]
        self.assertEqual(
            (withdrawal["status"], withdrawal["amount"], withdrawal["zcashAddress"], withdrawal["owner"]),
            ("confirmed", "0.5", WITHDRAW_ADDRESS, owner),
        )
        self.assertEqual(c.withdrawals.retrieve(withdrawal["withdrawalId"])["status"], "confirmed")
        # Custody opened the address sealed for the note's owner and paid it the ZEC the proof released.
        payout_id = withdrawal["payoutId"]
        assert payout_id is not None, "the withdrawal made no payout"
        self.assertEqual(settled_payout(c, payout_id), {"owner": owner, "status": 2, "zatDue": "50000000"})


if __name__ == "__main__":
    unittest.main()
