"""The Python examples, and the Python guide's snippet (docs/guide/python.md), run against the real stack as a reader would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

from .helpers import REPO
from .stack import stack

PACKAGE = REPO / "sdk" / "python"


def run_example(name: str) -> str:
    return run_python([str(REPO / "examples" / "python" / name)], name)


def guide_snippet() -> str:
    """The first Python block of the Python guide (docs/guide/python.md)."""
    page = (REPO / "docs" / "guide" / "python.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", page, re.S)
    if not found:
        raise AssertionError("no ```python block in docs/guide/python.md")
    return found.group(1)


def run_python(args: "list[str]", name: str) -> str:
    running = stack()
    env = {
        **os.environ,
        "ZSD_API_KEY": running.api_key,
        "ZSD_BASE_URL": running.base_url,
        # As after `pip install sdk/python`, without installing into the test's interpreter.
        "PYTHONPATH": str(PACKAGE),
    }
    done = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
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

    def test_guide_snippet(self) -> None:
        # As written: saved as a file and run from the repository's root, nothing defined for it.
        out = run_python(["-c", guide_snippet()], "the Python guide's snippet")
        self.assertRegex(out, r"minted 100 ZSD to 0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc: confirmed, position \d+")


if __name__ == "__main__":
    unittest.main()
