"""Shared by the tests: the repository, and Node.js scripts run from it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional

REPO = Path(__file__).resolve().parents[3]


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("These tests need Node.js (node) on PATH")
    return found


def run_node(script: str, stdin: Optional[Dict[str, Any]] = None, *, typescript: bool = False) -> Any:
    """Runs an ES module script from the repository root (its node_modules) and parses its JSON output."""
    command = [node(), "--input-type=module"]
    if typescript:
        command = [node(), "--import", "tsx", "--input-type=module"]
    done = subprocess.run(
        [*command, "-e", script],
        cwd=REPO,
        input=json.dumps(stdin or {}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"node failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout)
