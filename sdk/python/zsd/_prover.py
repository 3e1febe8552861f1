"""Proving without a proof in the caller's hands: the JavaScript CLI, run as a subprocess.

The note is handed to a local ``node`` process only; it never leaves the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, cast

from .errors import NodeNotFoundError, ProverError

CLI_IN_REPOSITORY = Path("sdk") / "js" / "bin" / "zsd.js"


class CliFailure(ProverError):
    """The CLI's own error; ``followed`` is the request it was following when it stopped (``wdr_…``, ``mint_…``),
    for a flow that reads that record to raise its own typed error."""

    def __init__(self, message: str, *, followed: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.followed = followed


def find_node() -> str:
    """``ZSD_NODE``, else ``node`` on PATH; a clear error when Node.js is missing."""
    configured = os.environ.get("ZSD_NODE")
    if configured:
        if shutil.which(configured) is None:
            raise NodeNotFoundError(f"ZSD_NODE is {configured!r}, which is not an executable.")
        return configured
    found = shutil.which("node")
    if found is None:
        raise NodeNotFoundError(
            "Node.js (node) is not on PATH: the ZSD prover runs in Node.js >= 20. "
            "Install it from https://nodejs.org, or set ZSD_NODE to its path."
        )
    return found


def find_cli() -> Path:
    """``ZSD_CLI``, else the JavaScript SDK's CLI beside this package or above the working directory."""
    configured = os.environ.get("ZSD_CLI")
    if configured:
        path = Path(configured)
        if not path.is_file():
            raise ProverError(f"ZSD_CLI is {configured!r}, which is not a file.")
        return path
    here = Path(__file__).resolve()
    # In the repository (or an editable install) the CLI is at sdk/js/bin beside sdk/python.
    candidates: List[Path] = [parent / CLI_IN_REPOSITORY for parent in here.parents]
    cwd = Path.cwd().resolve()
    for parent in [cwd, *cwd.parents]:
        candidates.append(parent / CLI_IN_REPOSITORY)
        candidates.append(parent / "node_modules" / "@zsd" / "sdk" / "bin" / "zsd.js")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ProverError(
        "The ZSD command line (sdk/js/bin/zsd.js) was not found: set ZSD_CLI to its path, "
        "or run from a checkout of the ZSD repository."
    )


def run_cli(
    arguments: Sequence[str],
    *,
    api_key: Optional[str] = None,
    base_url: Optional[str] = None,
    timeout: float = 600.0,
    note: Optional[str] = None,
    extra_env: Optional[Dict[str, str]] = None,
    on_warning: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Dict[str, Any]:
    """Runs ``node zsd.js <arguments> --json`` and returns the one JSON object it prints.

    Each ``{"warning": …}`` line the CLI prints on stderr goes to ``on_warning``, once it has finished.
    """
    node = find_node()
    cli = find_cli()
    env = dict(os.environ)
    if api_key is not None:
        env["ZSD_API_KEY"] = api_key
    if base_url is not None:
        env["ZSD_BASE_URL"] = base_url
    if note is not None:
        env["ZSD_NOTE"] = note
    env.update(extra_env or {})
    command = [node, str(cli), *arguments, "--json"]
    try:
        done = subprocess.run(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        # Not chained: TimeoutExpired names the command line, which holds the note.
        raise ProverError(f"`zsd {arguments[0]}` did not finish within {timeout:.0f} s") from None
    except OSError as e:
        raise NodeNotFoundError(f"Could not run {node}: {e}") from e
    if done.returncode != 0:
        raise _failure(arguments, done.returncode, done.stderr)
    try:
        parsed: Any = json.loads(done.stdout)
    except ValueError as e:
        raise ProverError(f"`zsd {arguments[0]}` printed no JSON: {_tail(done.stdout)}") from e
    if not isinstance(parsed, dict):
        raise ProverError(f"`zsd {arguments[0]}` printed {type(parsed).__name__}, not an object")
    if on_warning is not None:
        for warning in _warnings(done.stderr):
            on_warning(warning)
    return parsed  # pyright: ignore[reportUnknownVariableType]


def _warnings(stderr: str) -> List[Dict[str, Any]]:
    """The CLI's warnings: with --json, each is a line ``{"warning": {code, message, …}}``."""
    found: List[Dict[str, Any]] = []
    for line in stderr.splitlines():
        if not line.startswith('{"warning"'):
            continue
        try:
            parsed: Any = json.loads(line)
        except ValueError:
            continue
        if not isinstance(parsed, dict):
            continue
        warning: Any = cast(Dict[str, Any], parsed).get("warning")
        if isinstance(warning, dict) and isinstance(cast(Dict[str, Any], warning).get("message"), str):
            found.append(cast(Dict[str, Any], warning))
    return found


def _failure(arguments: Sequence[str], exit_code: int, stderr: str) -> ProverError:
    """The CLI's error: with --json its last line is {error, code, requestId}, and ``id`` when it was following
    a request."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    try:
        detail: Any = json.loads(lines[-1]) if lines else None
    except ValueError:
        detail = None
    if isinstance(detail, dict) and isinstance(detail.get("error"), str):  # pyright: ignore[reportUnknownMemberType]
        found = cast(Dict[str, Any], detail)
        code = found.get("code")
        request_id = found.get("requestId")
        followed = found.get("id")
        return CliFailure(
            f"`zsd {arguments[0]}` failed: {found['error']}",
            code=code if isinstance(code, str) else None,
            request_id=request_id if isinstance(request_id, str) else None,
            followed=followed if isinstance(followed, str) else None,
        )
    return ProverError(f"`zsd {' '.join(arguments[:2])}` failed (exit {exit_code}): {_tail(stderr)}")


def _tail(text: str, lines: int = 15) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return "\n".join(kept) or "(no output)"
