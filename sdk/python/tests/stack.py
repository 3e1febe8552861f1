"""The real stack for the end-to-end tests: scripts/test-stack.ts, started once per test run.

ZSD_TEST_STACK (a JSON object as the script prints it) uses a stack already running instead.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Optional

from .helpers import REPO, node


@dataclass(frozen=True)
class Stack:
    base_url: str
    api_key: str
    rpc_url: str
    indexer_url: str


_stack: Optional[Stack] = None
_process: Optional[subprocess.Popen[str]] = None
_lock = threading.Lock()


def stack() -> Stack:
    global _stack, _process
    with _lock:
        if _stack is not None:
            return _stack
        given = os.environ.get("ZSD_TEST_STACK")
        if given:
            _stack = _parse(given)
            return _stack
        # stdin stays open while this process lives: the stack stops when it closes.
        _process = subprocess.Popen(
            [node(), "--import", "tsx", "scripts/test-stack.ts"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        atexit.register(_stop)
        assert _process.stdout is not None
        line = _process.stdout.readline()
        if not line:
            raise RuntimeError(f"scripts/test-stack.ts exited ({_process.wait()}) before it was ready")
        _stack = _parse(line)
        return _stack


def _parse(line: str) -> Stack:
    found = json.loads(line)
    return Stack(found["baseUrl"], found["apiKey"], found["rpcUrl"], found["indexerUrl"])


def _stop() -> None:
    if _process is None or _process.poll() is not None:
        return
    _process.send_signal(signal.SIGTERM)
    try:
        _process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(_process.pid, signal.SIGKILL)


def hardhat_account(index: int) -> str:
    """The address of Hardhat development account ``index`` (5 and up are free for tests)."""
    return sign_with_viem("address", {"index": index})["address"]


def sign_with_viem(what: str, payload: object) -> dict[str, str]:
    """What a wallet does, since Python's standard library has no secp256k1: viem, with a Hardhat key."""
    script = """
    import { readFileSync } from "node:fs";
    import { mnemonicToAccount } from "viem/accounts";
    import { parseSignature } from "viem";
    const { what, payload } = JSON.parse(readFileSync(0, "utf8"));
    const account = mnemonicToAccount("test test test test test test test test test test test junk", {
      addressIndex: payload.index,
    });
    if (what === "address") {
      console.log(JSON.stringify({ address: account.address }));
    } else {
      const typed = payload.typedData;
      // uint fields arrive as decimal strings (JSON has no big integers).
      const fields = typed.types[typed.primaryType];
      const message = Object.fromEntries(Object.entries(typed.message).map(([name, value]) => {
        const type = fields.find((f) => f.name === name)?.type ?? "";
        return [name, type.startsWith("uint") ? BigInt(value) : value];
      }));
      const signature = await account.signTypedData({ ...typed, message });
      const { v, r, s } = parseSignature(signature);
      console.log(JSON.stringify({ v: Number(v), r, s }));
    }
    """
    done = subprocess.run(
        [node(), "--input-type=module", "-e", script],
        cwd=REPO,
        input=json.dumps({"what": what, "payload": payload}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"viem signer failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


