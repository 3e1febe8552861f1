// A local JSON-RPC server that speaks zcashd's request/response format for the
// three calls custody makes, with its own notes and operations: the protocol
// peer of the zcashd adapter in tests.
import { randomBytes, randomUUID } from "node:crypto";
import { type Server, createServer } from "node:http";
import { ZAT_PER_ZEC } from "@zsd/sdk/units";

export interface TestNote {
  txid: string;
  amountZat: number;
  memo: string;
  confirmations: number;
}

export interface ZcashdTestServer {
  url: string;
  user: string;
  password: string;
  notes: TestNote[];
  sends: {
    from: string;
    amounts: { address: string; amount: number; memo?: string }[];
    privacyPolicy?: string;
    opid: string;
    /** The txid its operation answers once done, as zcashd prints txids (display form). */
    txid?: string;
  }[];
  /** The next z_sendmany operation fails with this message (after it was accepted). */
  failNextSend?: string;
  /** The next z_sendmany is carried out, but its answer is lost (the connection drops). */
  dropNextSendAnswer?: boolean;
  /** The next z_sendmany call is answered with this RPC error (nothing is sent). */
  refuseNextSend?: string;
  /** Answers every call with HTTP 503 while set, as a zcashd that is down behind a proxy. */
  unavailable: boolean;
  /** Operations stay "executing" while this is set. */
  holdOperations: boolean;
  /** As after a zcashd restart: the operations it knew are gone. */
  forgetOperations(): void;
  close(): Promise<void>;
}

export function memoHex(text: string): string {
  const memo = Buffer.alloc(512);
  memo.write(text, "utf8");
  return memo.toString("hex");
}

export async function startZcashdTestServer(custodyAddress: string): Promise<ZcashdTestServer> {
  const operations = new Map<string, { polls: number; txid?: string; error?: string }>();
  const state: ZcashdTestServer = {
    url: "",
    user: "zsd",
    password: randomBytes(8).toString("hex"),
    notes: [],
    sends: [],
    holdOperations: false,
    unavailable: false,
    forgetOperations: () => operations.clear(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const expectedAuth = `Basic ${Buffer.from(`${state.user}:${state.password}`).toString("base64")}`;

  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      if (state.unavailable) {
        res.writeHead(503).end();
        return;
      }
      if (req.headers.authorization !== expectedAuth) {
        res.writeHead(401).end();
        return;
      }
      const { id, method, params } = JSON.parse(raw) as { id: number; method: string; params: unknown[] };
      const reply = (result: unknown, error: { code: number; message: string } | null = null) =>
        res
          .writeHead(error ? 500 : 200, { "content-type": "application/json" })
          .end(JSON.stringify({ result, error, id }));
      switch (method) {
        case "z_listreceivedbyaddress": {
          const [address, minconf] = params as [string, number];
          if (address !== custodyAddress) return reply(null, { code: -5, message: "Invalid zaddr" });
          return reply(
            state.notes
              .filter((n) => n.confirmations >= (minconf ?? 1))
              .map((n, i) => ({ ...n, amount: n.amountZat / Number(ZAT_PER_ZEC), outindex: i, change: false })),
          );
        }
        case "z_sendmany": {
          const [from, amounts, , , privacyPolicy] = params as [
            string,
            { address: string; amount: number; memo?: string }[],
            number,
            number | null,
            string | undefined,
          ];
          if (from !== custodyAddress) return reply(null, { code: -5, message: "Invalid from address" });
          const refusal = state.refuseNextSend;
          state.refuseNextSend = undefined;
          if (refusal) return reply(null, { code: -6, message: refusal });
          const opid = `opid-${randomUUID()}`;
          const failure = state.failNextSend;
          state.failNextSend = undefined;
          const txid = failure ? undefined : randomBytes(32).toString("hex");
          state.sends.push({ from, amounts, privacyPolicy, opid, txid });
          operations.set(opid, failure ? { polls: 0, error: failure } : { polls: 0, txid });
          if (state.dropNextSendAnswer) {
            state.dropNextSendAnswer = false;
            req.socket.destroy();
            return;
          }
          return reply(opid);
        }
        case "z_getoperationstatus": {
          const [ids] = params as [string[]];
          return reply(
            ids.flatMap((opid) => {
              const op = operations.get(opid);
              if (!op) return [];
              if (state.holdOperations) return [{ id: opid, status: "executing" }];
              op.polls++;
              // Queued, then executing, then done: a real operation takes a while.
              if (op.polls === 1) return { id: opid, status: "queued" };
              if (op.polls === 2) return { id: opid, status: "executing" };
              return op.error
                ? { id: opid, status: "failed", error: { code: -6, message: op.error } }
                : { id: opid, status: "success", result: { txid: op.txid } };
            }),
          );
        }
        default:
          return reply(null, { code: -32601, message: "Method not found" });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}
