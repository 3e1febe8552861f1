"""Mint ZSD against a sandbox ZEC deposit, then redeem part of it, with the Python SDK.

    pip install cryptography sdk/python
    ZSD_API_KEY=sk_test_… python3 examples/python/mint_and_redeem.py

Needs Node.js: the proof is made locally by the JavaScript CLI (sdk/js/bin/zsd.js), and this
example's wallet signs with viem (Python's standard library has no secp256k1). Environment:
ZSD_API_KEY, ZSD_BASE_URL (default http://127.0.0.1:3000), ZSD_WALLET_INDEX (the Hardhat
development account that receives and redeems, default 5: sandbox only, never a real key).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import zsd

REPOSITORY = Path(__file__).resolve().parents[2]
WITHDRAW_ADDRESS = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez"

WALLET = """
import { readFileSync } from "node:fs";
import { mnemonicToAccount } from "viem/accounts";
import { parseSignature } from "viem";
const { index, typedData } = JSON.parse(readFileSync(0, "utf8"));
const mnemonic = "test test test test test test test test test test test junk";
const account = mnemonicToAccount(mnemonic, { addressIndex: index });
if (!typedData) {
  console.log(JSON.stringify({ address: account.address }));
} else {
  const fields = typedData.types[typedData.primaryType];
  const message = Object.fromEntries(Object.entries(typedData.message).map(([name, value]) => [
    name, fields.find((f) => f.name === name).type.startsWith("uint") ? BigInt(value) : value,
  ]));
  const { v, r, s } = parseSignature(await account.signTypedData({ ...typedData, message }));
  console.log(JSON.stringify({ v: Number(v), r, s }));
}
"""


def wallet(request: Dict[str, Any]) -> Dict[str, Any]:
    """A development wallet in Node.js with viem: its address, or its signature of EIP-712 typed data."""
    done = subprocess.run(
        ["node", "--input-type=module", "-e", WALLET],
        cwd=REPOSITORY,
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    client = zsd.Client(os.environ["ZSD_API_KEY"], os.environ.get("ZSD_BASE_URL"))
    index = int(os.environ.get("ZSD_WALLET_INDEX", "5"))
    address: str = wallet({"index": index})["address"]

    note = client.notes.create()  # keep note["note"] secret: it spends the deposit
    deposit = client.sandbox.deposit(amount="4", note_commitment=note["noteCommitment"])
    print(f"deposited {deposit['amount']} ZEC at leaf {deposit['leafIndex']}")

    mint = client.mint(note=note["note"], amount="100", recipient=address)
    print(f"mint {mint['mintId']}: {mint['status']}, {mint['amount']} ZSD to {mint['recipient']}")

    def sign(typed_data: zsd.TypedData) -> Dict[str, Any]:
        return wallet({"index": index, "typedData": typed_data})

    # The address is checked and sealed to custody's key (GET /v1/relay) for this owner: the chain sees ciphertext.
    redemption = client.redeem(amount="25", withdraw_address=WITHDRAW_ADDRESS, owner=address, sign=sign)
    print(f"redemption {redemption['id']}: {redemption['status']}, {redemption['zecDue']} ZEC")
    balance = client.ledger.balances(address)["balances"][0]["amount"]
    print(f"balance of {address}: {balance} ZSD")


if __name__ == "__main__":
    try:
        main()
    except zsd.ZsdError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
