"""Client.mint's use of the JavaScript CLI: arguments, environment, output, failures, and Node.js missing."""

from __future__ import annotations

import json
import os
import tempfile
import traceback
import unittest
from pathlib import Path
from typing import Dict, List, cast
from unittest import mock

import zsd

from .fake_server import Answer, FakeServer

# Prints what it was given, as the proof body: the test checks that the client passed it on unchanged.
RECORDING_CLI = """
const args = process.argv.slice(2);
if (args.includes("--fail")) { console.error("prove: the deposit is not in the tree"); process.exit(3); }
if (args.includes("--fail-json")) {
  console.error(JSON.stringify({ error: "no deposit of this note", code: "deposit_not_found", requestId: null }));
  process.exit(1);
}
if (args.includes("--hang")) setInterval(() => {}, 1000);
else if (args[0] === "note") {
  console.log(JSON.stringify({ note: "zsdnote1abc", noteCommitment: "123" }));
  process.exit(0);
}
const value = (name) => args[args.indexOf(name) + 1];
// As the real CLI says it with --json: a line of its own among the progress, before the proof is printed.
if (process.env.ZSD_MIN_ANONYMITY) {
  console.error("tree: 4 deposit leaves");
  const minimum = Number(process.env.ZSD_MIN_ANONYMITY);
  const message = `Only 3 deposits could back a mint proving 0.5 ZEC (fewer than ${minimum})`;
  console.error(JSON.stringify({ warning: { code: "small_anonymity_set", floor: "0.5", candidates: 3, minimum, message } }));
}
if (!args.includes("--hang")) console.log(JSON.stringify({
  proof: { pi_a: ["1"], pi_b: [["2"]], pi_c: ["3"], protocol: "groth16", curve: "bn128" },
  publicSignals: ["1", "2", "3", "4"],
  mintAmount: value("--amount"),
  recipient: value("--recipient"),
  relayer: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
  fee: "0",
  seen: { args, apiKey: process.env.ZSD_API_KEY, baseUrl: process.env.ZSD_BASE_URL, note: process.env.ZSD_NOTE },
}));
"""

RECIPIENT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


class ProverTest(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.cli = Path(directory.name) / "zsd.js"
        self.cli.write_text(RECORDING_CLI)
        self.server = FakeServer()
        self.addCleanup(self.server.close)
        patcher = mock.patch.dict(os.environ, {"ZSD_CLI": str(self.cli)})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.client = zsd.Client("sk_test_prover", self.server.url, poll_interval=0)

    def test_mint_proves_with_the_cli_submits_its_body_mints_and_waits_for_confirmed(self) -> None:
        mint = {"object": "mint", "mintId": "mint_1", "status": "queued", "failureReason": None}
        self.server.answers.extend(
            [
                Answer(201, {"object": "proof", "proofId": "prf_1", "mintAmount": "12.5"}),
                Answer(202, {"status": "queued", "mintId": "mint_1"}),
                Answer(200, mint),
                Answer(200, {**mint, "status": "submitted"}),
                Answer(200, {**mint, "status": "confirmed", "txHash": "0xabc"}),
            ]
        )
        result = self.client.mint(note="zsdnote1secret", amount="12.5", recipient=RECIPIENT, floor="0.5")
        self.assertEqual(result["status"], "confirmed")
        submit, create, *polls = self.server.received
        self.assertEqual((submit.method, submit.path), ("POST", "/v1/proofs/submit"))
        seen: Dict[str, object] = submit.body.pop("seen")
        self.assertEqual(
            seen["args"],
            ["prove", "--amount", "12.5", "--recipient", RECIPIENT] + ["--floor", "0.5", "--json"],
        )
        # The note reaches the prover in its environment, never on its command line (readable with ps).
        self.assertEqual(seen["note"], "zsdnote1secret")
        self.assertEqual(seen["apiKey"], "sk_test_prover")
        self.assertEqual(seen["baseUrl"], self.server.url)
        self.assertEqual(submit.body["mintAmount"], "12.5")
        self.assertEqual(
            create.body, {"amount": "12.5", "collateralType": "ZEC", "proofId": "prf_1", "recipient": RECIPIENT}
        )
        self.assertEqual([p.path for p in polls], ["/v1/mints/mint_1"] * 3)
        # The note never goes to the API.
        for received in self.server.received:
            self.assertNotIn("zsdnote1secret", json.dumps(received.body) + received.path)

    def test_mint_passes_the_notes_amount_when_the_api_does_not_tell_it(self) -> None:
        # A deposit another account or a Zcash wallet made: the chain shows no deposit's amount.
        mint = {"object": "mint", "mintId": "mint_3", "status": "confirmed", "failureReason": None}
        self.server.answers.extend(
            [
                Answer(201, {"object": "proof", "proofId": "prf_3", "mintAmount": "1"}),
                Answer(202, {"status": "queued", "mintId": "mint_3"}),
                Answer(200, mint),
            ]
        )
        self.client.mint(note="zsdnote1secret", amount="1", recipient=RECIPIENT, note_amount="2.5")
        seen: Dict[str, object] = self.server.received[0].body.pop("seen")
        self.assertEqual(
            seen["args"],
            ["prove", "--amount", "1", "--recipient", RECIPIENT] + ["--note-amount", "2.5", "--json"],
        )

    def test_a_failed_mint_raises_with_its_failure(self) -> None:
        failed = {"mintId": "mint_2", "status": "failed", "failureCode": "stale_price", "failureReason": "old price"}
        self.server.answers.extend(
            [
                Answer(201, {"proofId": "prf_2", "mintAmount": "1"}),
                Answer(202, {"mintId": "mint_2"}),
                Answer(200, failed),
            ]
        )
        with self.assertRaises(zsd.MintFailedError) as raised:
            self.client.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT)
        self.assertEqual(raised.exception.code, "stale_price")
        self.assertIn("old price", str(raised.exception))

    def test_an_anonymity_warning_of_the_cli_reaches_on_warning_before_anything_is_submitted(self) -> None:
        strict = zsd.Client("sk_test_prover", self.server.url, poll_interval=0, min_anonymity=50)
        told: List[zsd.AnonymityWarning] = []

        def stop(warning: zsd.AnonymityWarning) -> None:
            told.append(warning)
            raise RuntimeError("too few")

        with self.assertRaisesRegex(RuntimeError, "too few"):
            strict.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT, on_warning=stop)
        # The client's minimum reached the prover (ZSD_MIN_ANONYMITY), and its warning came back whole.
        self.assertEqual(
            told,
            [
                {
                    "code": "small_anonymity_set",
                    "floor": "0.5",
                    "candidates": 3,
                    "minimum": 50,
                    "message": "Only 3 deposits could back a mint proving 0.5 ZEC (fewer than 50)",
                }
            ],
        )
        self.assertEqual(self.server.received, [], "a callback that raises stops the mint before the proof is sent")

    def test_without_on_warning_a_small_anonymity_set_is_a_python_warning_and_the_mint_goes_on(self) -> None:
        self.server.answers.extend(
            [
                Answer(201, {"proofId": "prf_3", "mintAmount": "1"}),
                Answer(202, {"mintId": "mint_3"}),
                Answer(200, {"mintId": "mint_3", "status": "confirmed"}),
            ]
        )
        strict = zsd.Client("sk_test_prover", self.server.url, poll_interval=0, min_anonymity=20)
        with self.assertWarns(zsd.SmallAnonymitySetWarning) as caught:
            mint = strict.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT)
        self.assertEqual(mint["status"], "confirmed")
        self.assertEqual(cast(zsd.SmallAnonymitySetWarning, caught.warning).warning["candidates"], 3)
        self.assertIn("fewer than 20", str(caught.warning))
        self.assertEqual(caught.filename, __file__, "the warning points at the caller's mint")

    def test_a_minimum_that_is_no_whole_number_is_refused(self) -> None:
        for wrong in (-1, 2.5, "20", True):
            with self.assertRaisesRegex(ValueError, "min_anonymity is a whole number"):
                zsd.Client("sk_test_prover", self.server.url, min_anonymity=wrong)  # type: ignore[arg-type]

    def test_notes_create_runs_note_new(self) -> None:
        self.assertEqual(self.client.notes.create(), {"note": "zsdnote1abc", "noteCommitment": "123"})

    def test_a_failing_cli_raises_prover_error_with_its_message(self) -> None:
        with self.assertRaises(zsd.ProverError) as raised:
            self.client.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT, floor="--fail")
        self.assertIn("the deposit is not in the tree", str(raised.exception))
        self.assertEqual(self.server.received, [])

    def test_the_cli_json_error_gives_message_and_code(self) -> None:
        with self.assertRaises(zsd.ProverError) as raised:
            self.client.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT, floor="--fail-json")
        self.assertEqual(raised.exception.code, "deposit_not_found")
        self.assertIn("no deposit of this note", str(raised.exception))

    def test_a_timed_out_prover_does_not_carry_the_note(self) -> None:
        # subprocess.TimeoutExpired names the whole command line, the note included; a logged
        # traceback prints the cause of the error with it.
        self.client.prover_timeout = 1
        with self.assertRaises(zsd.ProverError) as raised:
            self.client.mint(note="zsdnote1secret", amount="1", recipient=RECIPIENT, floor="--hang")
        error = raised.exception
        shown = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        self.assertIn("did not finish within", shown)
        self.assertNotIn("zsdnote1secret", shown)

    def test_says_clearly_when_node_is_missing(self) -> None:
        with tempfile.TemporaryDirectory() as empty:
            environment = {k: v for k, v in os.environ.items() if k != "ZSD_NODE"}
            with mock.patch.dict(os.environ, {**environment, "PATH": empty}, clear=True):
                with self.assertRaises(zsd.NodeNotFoundError) as raised:
                    self.client.mint(note="zsdnote1x", amount="1", recipient=RECIPIENT)
        self.assertIn("Node.js", str(raised.exception))
        with mock.patch.dict(os.environ, {"ZSD_NODE": "/nonexistent/node"}):
            with self.assertRaises(zsd.NodeNotFoundError):
                self.client.notes.create()

    def test_says_clearly_when_the_cli_is_missing(self) -> None:
        with mock.patch.dict(os.environ, {"ZSD_CLI": "/nonexistent/zsd.js"}):
            with self.assertRaises(zsd.ProverError) as raised:
                self.client.notes.create()
        self.assertIn("ZSD_CLI", str(raised.exception))



if __name__ == "__main__":
    unittest.main()
