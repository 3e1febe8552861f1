"""Read the ledger and register a compliance agent whose webhook verifies each delivery.

    pip install sdk/python
    ZSD_API_KEY=sk_test_… python3 examples/python/ledger_and_agent.py

Starts a webhook receiver on 127.0.0.1 (the sandbox delivers to loopback addresses), registers
an agent pointing at it, asks the API for a test delivery and verifies its Standard Webhooks
signature with the agent's secret. Environment: ZSD_API_KEY, ZSD_BASE_URL.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Tuple

import zsd

Delivery = Tuple[bytes, dict[str, str]]


def receiver(deliveries: "queue.Queue[Delivery]") -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            deliveries.put((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    client = zsd.Client(os.environ["ZSD_API_KEY"], os.environ.get("ZSD_BASE_URL"))

    supply = client.ledger.supply()
    collateral = client.ledger.collateral()
    peg = client.ledger.peg_price()
    print(f"supply: {supply['circulating']} ZSD circulating, {supply['holders']} holders")
    print(f"collateral: {collateral['outstandingZec']} ZEC, ratio {collateral['collateralRatio']}")
    print(f"peg: {peg['pegPrice']} USD, ZEC at {peg['zecUsd']} USD (block {peg['asOfBlock']})")

    deliveries: "queue.Queue[Delivery]" = queue.Queue()
    server = receiver(deliveries)
    try:
        agent = client.agents.register(
            name="example observer",
            webhook_url=f"http://127.0.0.1:{server.server_address[1]}/zsd",
            events=["mint.confirmed", "redemption.paid"],
            role="observer",
        )
        print(f"agent {agent['agentId']} registered")
        secret = agent["secret"]  # shown once, at registration: store it with the receiver
        assert secret is not None
        client.agents.test(agent["agentId"])
        body, headers = deliveries.get(timeout=30)
        event = zsd.Webhook(secret).verify(body, headers)
        print(f"verified a {event['type']} delivery ({headers.get('webhook-id')})")
        client.agents.delete(agent["agentId"])
        print(f"agent {agent['agentId']} deleted")
    finally:
        server.shutdown()


if __name__ == "__main__":
    try:
        main()
    except zsd.ZsdError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
