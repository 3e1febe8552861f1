// Custody's reserves against the chain, as GET /v1/reserves gives them: the newest reading, what
// each side said and when, and the readings before, so that a shortfall and its end can be seen.
import { type ReserveReading, presentReading } from "../../domain/reserves/reserves.ts";
import { html } from "./html.ts";
import { type PageContext, layout } from "./layout.ts";
import { table } from "./table.ts";

export function reservesPage(ctx: PageContext, readings: ReserveReading[] | undefined): string {
  const [latest] = readings ?? [];
  const shown = latest && presentReading(latest);
  return layout(
    ctx,
    html`<h2>Reserves</h2>
      <p>
        The ZEC custody's own Zcash node shows against what the chain says custody holds (deposits recorded less payouts
        completed). Anyone can read the same at <code>GET /v1/reserves</code>, and check custody's node with its
        exported viewing key.
      </p>
      ${
        !readings
          ? html`<p>Reserves are not watched by this API (no zcashd custody is configured).</p>`
          : !shown
            ? html`<p>No reading yet: the first comes with the relay worker's next pass.</p>`
            : html`<article aria-labelledby="reserves-now">
                  <h3 id="reserves-now">${shown.status === "ok" ? "Backed" : "Short"}</h3>
                  <dl>
                    <dt>Custody holds</dt>
                    <dd>${shown.custody.held} ZEC (+ ${shown.custody.inFlight} ZEC in payouts not yet settled)</dd>
                    <dt>The chain counts</dt>
                    <dd>${shown.chain.expected} ZEC</dd>
                    <dt>Difference</dt>
                    <dd>${shown.difference} ZEC</dd>
                    <dt>New mints</dt>
                    <dd>
                      ${shown.mintsPaused ? "stopped" : "open"}${
                        shown.pauseFailed ? " (the guardian's transaction failed: retried at the next reading)" : ""
                      }
                    </dd>
                    <dt>Read</dt>
                    <dd>
                      ${shown.readAt}, chain block ${shown.chain.blockNumber}, Zcash height ${shown.custody.zcashHeight}
                    </dd>
                  </dl>
                </article>
                <h3>History</h3>
                ${table(readings.map(presentReading), [
                  { header: "Read at", cell: (r) => r.readAt, rowHeader: true },
                  { header: "Custody (ZEC)", cell: (r) => r.custody.held },
                  { header: "In flight (ZEC)", cell: (r) => r.custody.inFlight },
                  { header: "Chain (ZEC)", cell: (r) => r.chain.expected },
                  { header: "Difference (ZEC)", cell: (r) => r.difference },
                  { header: "Status", cell: (r) => r.status },
                  { header: "Block", cell: (r) => r.chain.blockNumber },
                ])}`
      }`,
  );
}
