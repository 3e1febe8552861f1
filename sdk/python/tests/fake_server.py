"""A scripted HTTP server on 127.0.0.1 for the unit tests: answers from a queue, records every request."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List


def _no_headers() -> Dict[str, str]:
    return {}


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: Dict[str, str] = field(default_factory=lambda: _no_headers())
    # Close the connection without answering: a network failure as the client sees it.
    drop: bool = False
    # Seconds to wait before answering: longer than the client's timeout, a timeout.
    delay: float = 0.0


@dataclass
class Received:
    method: str
    path: str
    headers: Dict[str, str]
    body: Any


class FakeServer:
    def __init__(self) -> None:
        self.answers: List[Answer] = []
        self.received: List[Received] = []
        self.default = Answer(200, {"ok": True})
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                server.received.append(
                    Received(
                        method=self.command,
                        path=self.path,
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=json.loads(raw) if raw else None,
                    )
                )
                answer = server.answers.pop(0) if server.answers else server.default
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                payload = b"" if answer.body is None else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                content_type = "application/problem+json" if answer.status >= 400 else "application/json"
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle
            do_POST = _handle
            do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=lambda: self._server.serve_forever(poll_interval=0.02), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def problem(status: int, code: str, detail: str = "d", **extra: Any) -> Dict[str, Any]:
    return {
        "type": f"/docs/problems#{code}",
        "title": "t",
        "status": status,
        "detail": detail,
        "code": code,
        "requestId": f"req_{code}",
        **extra,
    }


