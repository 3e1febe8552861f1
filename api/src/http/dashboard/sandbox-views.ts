// The sandbox page: a simulated deposit, and the magic values that make the
// sandbox's rules agent raise alerts. Shown in the sandbox environment only.
import { type Html, html } from "./html.ts";
import { type PageContext, csrfField, layout } from "./layout.ts";
import { table } from "./table.ts";

/** What the sandbox's rules agent fires on (rules.ts), and what it does then. */
const MAGIC_VALUES: [Html, string][] = [
  [
    html`an amount ending in <code>.13</code> (e.g. a mint of <code>100.13</code> ZSD)`,
    "a large-amount alert, as if above the threshold",
  ],
  [
    html`an amount ending in <code>.14</code> (e.g. a redemption of <code>25.14</code> ZSD)`,
    "a velocity alert, as if too many in the window",
  ],
  [
    html`an amount ending in <code>.15</code> (e.g. a repayment of <code>5.15</code> ZSD)`,
    "a denied-address alert, as if the address were denied: it is held",
  ],
  [
    html`a recipient, owner or signer address ending in <code>dead</code>`,
    "a denied-address alert: the mint, redemption or position action is held",
  ],
];

export function sandboxPage(
  ctx: PageContext,
  sandbox: {
    /** Whether this server can record a simulated deposit (a deployment and custody configured). */
    available: boolean;
    /** The address the sandbox's Zcash node refuses every payment to (SANDBOX_FAILING_PAYOUT_ADDRESS), if set. */
    failingPayoutAddress?: string;
  },
  result?: { leafIndex: number; txHash: string; amount: string; note?: string; noteCommitment: string },
): string {
  return layout(
    ctx,
    html`<h2>Simulate a deposit</h2>
      <p>
        Records a shielded ZEC deposit to the custody address on the sandbox chain, as the attestor would after seeing
        it (the same as <code>POST /v1/sandbox/deposits</code>).
      </p>
      ${
        result
          ? html`<article aria-labelledby="deposit-done">
              <h3 id="deposit-done">Deposit recorded</h3>
              <dl>
                <dt>Amount</dt>
                <dd>${result.amount} ZEC</dd>
                <dt>Leaf index</dt>
                <dd>${result.leafIndex}</dd>
                <dt>Transaction</dt>
                <dd><code>${result.txHash}</code></dd>
                <dt>Note commitment</dt>
                <dd><code>${result.noteCommitment}</code></dd>
                ${
                  result.note
                    ? html`<dt>Note (shown once: it spends the deposit)</dt>
                        <dd>
                          <output id="note">${result.note}</output>
                          <button type="button" data-copy="#note">Copy</button> <span data-copied role="status"></span>
                        </dd>`
                    : ""
                }
              </dl>
            </article>`
          : ""
      }
      ${
        sandbox.available
          ? html`<form method="post" action="/dashboard/sandbox/deposits">
              ${csrfField(ctx.csrfToken)}
              <label for="amount">Amount (ZEC)</label>
              <input
                id="amount"
                name="amount"
                required
                inputmode="decimal"
                pattern="[0-9]{1,11}([.][0-9]{1,8})?"
                placeholder="1.5"
              />
              <label for="noteCommitment"
                >Note commitment <small>(empty: a new note is made for you and shown once)</small></label
              >
              <input id="noteCommitment" name="noteCommitment" maxlength="80" placeholder="0x… or decimal" />
              <button type="submit">Record deposit</button>
            </form>`
          : html`<p role="status">
              The sandbox custody is not configured on this server (no deployment or attestor key).
            </p>`
      }
      <h2>Magic values</h2>
      <p>
        The sandbox's rules agent fires on these, so that alert and hold handling can be tried without real traffic. An
        amount is a mint's or redemption's ZSD, or what a position action names: the ZSD a repayment burns, the ZEC a
        withdrawal or top-up moves, the collateral a close or liquidation releases.
      </p>
      ${table(MAGIC_VALUES, [
        { header: "Send", cell: ([send]) => send },
        { header: "What happens", cell: ([, happens]) => happens },
      ])}
      ${
        sandbox.failingPayoutAddress
          ? html`<h2>A payout custody cannot pay</h2>
              <p>
                The sandbox's Zcash node refuses every payment to this address, as a real wallet refuses one it will not
                make: redeem to it (or withdraw collateral to it) and custody fails the payout on-chain and holds its
                ZEC for you, so that you can try a redirect (<code>zsd redirect red_… --to ZADDR|note</code>).
              </p>
              <p>
                <output id="failing-payout-address">${sandbox.failingPayoutAddress}</output>
                <button type="button" data-copy="#failing-payout-address">Copy</button>
                <span data-copied role="status"></span>
              </p>`
          : ""
      }`,
  );
}
