"""The Python examples run against the real stack, as a reader would run them."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from .helpers import REPO
from .stack import stack

PACKAGE = REPO / "sdk" / "python"


def run_example(name: str) -> str:
    running = stack()
    env = {
        **os.environ,
        "ZSD_API_KEY": running.api_key,
        "ZSD_BASE_URL": running.base_url,
        # As after `pip install sdk/python`, without installing into the test's interpreter.
        "PYTHONPATH": str(PACKAGE),
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python" / name)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class ExamplesTest(unittest.TestCase):
    def test_ledger_and_agent(self) -> None:
        out = run_example("ledger_and_agent.py")
        self.assertRegex(out, r"supply: [\d.]+ ZSD circulating")
        self.assertRegex(out, r"verified a ping delivery \(evt_\w+\)")
        self.assertRegex(out, r"agent agt_\w+ deleted")

    def test_mint_and_redeem(self) -> None:
        out = run_example("mint_and_redeem.py")
        self.assertRegex(out, r"mint mint_\w+: confirmed, 100 ZSD to 0x")
        self.assertRegex(out, r"redemption red_\w+: paid, [\d.]+ ZEC")


if __name__ == "__main__":
    unittest.main()
