// Each operation's call with our SDKs, for the reference (OpenAPI's `x-codeSamples`, which Scalar
// shows in place of its generic clients): the JS client (`@zsd/sdk/client`) and the Python one
// (`zsd`). `$body` stands for the operation's first request example written in each language, and
// `$body.name` for one of its members; lines before a call's last are comments shown above it.
// test/api/http/code-samples.test.ts type-checks every sample against the SDKs (tsc and pyright), so a
// renamed method or a changed signature fails there; an operation without samples fails there too.
import type { AnyRoute } from "../routes.ts";

interface Sample {
  /** The call, after `const zsd = new Zsd(process.env.ZSD_API_KEY);`. */
  js: string;
  /** The call, after `client = zsd.Client(os.environ["ZSD_API_KEY"])`. */
  python: string;
}

const ADDRESS = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc";
const ZADDR = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

const get = (js: string, python: string): Sample => ({ js, python });

export const CODE_SAMPLES: Record<string, Sample> = {
  // Relay
  getRelay: get("zsd.relay.get()", "client.relay.retrieve()"),
  getAnonymitySet: get('zsd.relay.anonymity("1")', 'client.relay.anonymity("1")'),
  // API keys
  createApiKey: get("zsd.keys.create($body)", "client.keys.create($body.name)"),
  listApiKeys: get("zsd.keys.list()", "client.keys.list()"),
  revokeApiKey: get('zsd.keys.revoke("key_3kTm9QxZ2bLw7VfA")', 'client.keys.revoke("key_3kTm9QxZ2bLw7VfA")'),
  // Ledger
  getSupply: get("zsd.ledger.supply()", "client.ledger.supply()"),
  getCollateral: get("zsd.ledger.collateral()", "client.ledger.collateral()"),
  getReserves: get("zsd.ledger.reserves({ history: 10 })", "client.ledger.reserves(history=10)"),
  getPegPrice: get("zsd.ledger.pegPrice()", "client.ledger.peg_price()"),
  getWalletBalances: get(`zsd.ledger.balances("${ADDRESS}")`, `client.ledger.balances("${ADDRESS}")`),
  listDepositLeaves: get(
    "zsd.ledger.depositLeaves({ from: 0, limit: 1000 }) // allDepositLeaves() pages through them all",
    "client.ledger.deposit_leaves(start=0, limit=1000)  # all_deposit_leaves() pages through them all",
  ),
  listPendingLeaves: get("zsd.ledger.pendingLeaves()", "client.ledger.pending_leaves()"),
  getDeposit: get(
    'zsd.ledger.deposit("dep_4Hn8pQ2rT6vX1zB3cD5f")',
    'client.ledger.deposit("dep_4Hn8pQ2rT6vX1zB3cD5f")',
  ),
  // Proofs
  submitProof: get(
    "// zsd.mint({ note, amount, recipient }) proves and submits for you.\nzsd.proofs.submit($body)",
    "# client.mint(note=…, amount=…, recipient=…) proves and submits for you.\nclient.proofs.submit($body)",
  ),
  getProof: get('zsd.proofs.get("prf_7Kq2mXb9LwT4zPa1QeR8")', 'client.proofs.retrieve("prf_7Kq2mXb9LwT4zPa1QeR8")'),
  getNullifier: get('zsd.proofs.nullifier("0x1b6a")', 'client.proofs.nullifier("0x1b6a")'),
  // Mint
  mint: get(
    "// zsd.mint({ note, amount, recipient }) proves, submits and waits for you.\nzsd.mints.create($body)",
    "# client.mint(note=…, amount=…, recipient=…) proves, submits and waits for you.\n" +
      "client.mints.create(proof_id=$body.proofId, amount=$body.amount, recipient=$body.recipient)",
  ),
  getMint: get('zsd.mints.get("mint_7KpX2mN9qR4tV6wY8zA1")', 'client.mints.retrieve("mint_7KpX2mN9qR4tV6wY8zA1")'),
  // Positions
  getPosition: get('zsd.positions.get("1")', 'client.positions.retrieve("1")'),
  getPositionTerms: get(`zsd.positions.terms("${ADDRESS}")`, `client.positions.terms("${ADDRESS}")`),
  repayPosition: get('zsd.positions.repay("1", $body)', 'client.positions.repay("1", $body)'),
  withdrawFromPosition: get('zsd.positions.withdraw("1", $body)', 'client.positions.withdraw("1", $body)'),
  closePosition: get('zsd.positions.close("1", $body)', 'client.positions.close("1", $body)'),
  liquidatePosition: get('zsd.positions.liquidate("1", $body)', 'client.positions.liquidate("1", $body)'),
  topUpPosition: get('zsd.positions.topUp("1", $body)', 'client.positions.top_up("1", $body)'),
  getPositionAction: get(
    'zsd.positions.action("1", "pact_4Rt8vN2kQ7xZ1mB5cW9y")',
    'client.positions.action("1", "pact_4Rt8vN2kQ7xZ1mB5cW9y")',
  ),
  getPositionActionById: get(
    'zsd.positions.actionById("pact_4Rt8vN2kQ7xZ1mB5cW9y")',
    'client.positions.action_by_id("pact_4Rt8vN2kQ7xZ1mB5cW9y")',
  ),
  // Withdrawals
  createWithdrawal: get("zsd.withdrawals.create($body)", "client.withdrawals.create($body)"),
  getWithdrawal: get(
    'zsd.withdrawals.get("wdr_8Kp2xV5nQ1mZ7tB3cR9w")',
    'client.withdrawals.retrieve("wdr_8Kp2xV5nQ1mZ7tB3cR9w")',
  ),
  // Redeem
  getRedemptionTerms: get(
    `zsd.redemptions.terms("${ADDRESS}", "${ZADDR}")`,
    `client.redemptions.terms("${ADDRESS}", "${ZADDR}")`,
  ),
  redeem: get(
    "// zsd.redeem({ amount, withdrawAddress, signer }) signs, sends and waits until paid.\nzsd.redemptions.create($body)",
    "# client.redeem(amount=…, withdraw_address=…, owner=…, sign=…) signs, sends and waits until paid.\n" +
      "client.redemptions.create(amount=$body.amount, owner=$body.owner, withdraw_address=$body.withdrawAddress, " +
      "permit=$body.permit)",
  ),
  getRedemption: get(
    'zsd.redemptions.get("red_9Vb3nM6kP1qS4tW7yZ2c")',
    'client.redemptions.retrieve("red_9Vb3nM6kP1qS4tW7yZ2c")',
  ),
  redirectPayout: get(
    "// The redemption's id (red_…) or its payout's on-chain id; zsd.redirectPayout({ … }) seals and signs for you.\n" +
      'zsd.redemptions.redirect("red_9Vb3nM6kP1qS4tW7yZ2c", $body)',
    "# The redemption's id (red_…) or its payout's on-chain id; client.redirect_payout(…) seals and signs for you.\n" +
      'client.redemptions.redirect("red_9Vb3nM6kP1qS4tW7yZ2c", deadline=$body.deadline, ' +
      "signature=$body.signature, sealed_address=$body.sealedAddress)",
  ),
  getPayoutRedirect: get(
    'zsd.redemptions.getRedirect("red_9Vb3nM6kP1qS4tW7yZ2c")',
    'client.redemptions.retrieve_redirect("red_9Vb3nM6kP1qS4tW7yZ2c")',
  ),
  // Sandbox
  simulateDeposit: get(
    '// zsd.sandbox.depositNote(note, "4") deposits for a note of zsd.notes.create().\nzsd.sandbox.deposit($body)',
    "client.sandbox.deposit(amount=$body.amount, note_commitment=$body.noteCommitment)",
  ),
  getSandboxPrice: get("zsd.sandbox.price()", "client.sandbox.price()"),
  setSandboxPrice: get("zsd.sandbox.setPrice($body)", "client.sandbox.set_price(**$body)"),
  // Compliance agents
  registerAgent: get(
    "zsd.agents.register($body)",
    "client.agents.register(name=$body.name, webhook_url=$body.webhookUrl, events=$body.events, " +
      "description=$body.description, role=$body.role)",
  ),
  listAgents: get("zsd.agents.list()", "client.agents.list()"),
  getAgent: get('zsd.agents.get("agt_3Hn6pQ9rT2vX5zB8cD1f")', 'client.agents.retrieve("agt_3Hn6pQ9rT2vX5zB8cD1f")'),
  updateAgent: get(
    'zsd.agents.update("agt_3Hn6pQ9rT2vX5zB8cD1f", $body)',
    'client.agents.update("agt_3Hn6pQ9rT2vX5zB8cD1f", $body)',
  ),
  deleteAgent: get('zsd.agents.delete("agt_3Hn6pQ9rT2vX5zB8cD1f")', 'client.agents.delete("agt_3Hn6pQ9rT2vX5zB8cD1f")'),
  rotateAgentSecret: get(
    'zsd.agents.rotateSecret("agt_3Hn6pQ9rT2vX5zB8cD1f")',
    'client.agents.rotate_secret("agt_3Hn6pQ9rT2vX5zB8cD1f")',
  ),
  testAgent: get('zsd.agents.test("agt_3Hn6pQ9rT2vX5zB8cD1f")', 'client.agents.test("agt_3Hn6pQ9rT2vX5zB8cD1f")'),
  listAgentDeliveries: get(
    'zsd.agents.deliveries("agt_3Hn6pQ9rT2vX5zB8cD1f", { status: "failed" })',
    'client.agents.deliveries("agt_3Hn6pQ9rT2vX5zB8cD1f", status="failed")',
  ),
  retryAgentDelivery: get(
    'zsd.agents.retryDelivery("agt_3Hn6pQ9rT2vX5zB8cD1f", "dlv_9sW3eR5tY7uI1oP3aS5d")',
    'client.agents.retry_delivery("agt_3Hn6pQ9rT2vX5zB8cD1f", "dlv_9sW3eR5tY7uI1oP3aS5d")',
  ),
  retryFailedAgentDeliveries: get(
    'zsd.agents.retryFailedSince("agt_3Hn6pQ9rT2vX5zB8cD1f", $body.since)',
    'client.agents.retry_deliveries("agt_3Hn6pQ9rT2vX5zB8cD1f", since=$body.since)',
  ),
  // Compliance alerts
  raiseAlert: get("zsd.alerts.raise($body)", "client.alerts.create($body)"),
  listAlerts: get('zsd.alerts.list({ status: "open" })', 'client.alerts.list(status="open")'),
  getAlert: get('zsd.alerts.get("alt_8HwV2nQk5TzR1mXb6LcP")', 'client.alerts.retrieve("alt_8HwV2nQk5TzR1mXb6LcP")'),
  updateAlert: get(
    'zsd.alerts.update("alt_8HwV2nQk5TzR1mXb6LcP", $body)',
    'client.alerts.update("alt_8HwV2nQk5TzR1mXb6LcP", $body)',
  ),
  releaseHold: get(
    'zsd.alerts.release("alt_8HwV2nQk5TzR1mXb6LcP", $body)',
    'client.alerts.release("alt_8HwV2nQk5TzR1mXb6LcP", agent_id=$body.agentId, note=$body.note)',
  ),
  rejectHold: get(
    'zsd.alerts.reject("alt_8HwV2nQk5TzR1mXb6LcP", $body)',
    'client.alerts.reject("alt_8HwV2nQk5TzR1mXb6LcP", agent_id=$body.agentId, reason_code=$body.reasonCode)',
  ),
  giveVerdict: get("zsd.alerts.verdict($body)", "client.alerts.verdict($body)"),
  // Governance
  getGovernance: get("zsd.governance.overview()", "client.governance.retrieve()"),
  listProposals: get("zsd.governance.proposals()", "client.governance.proposals()"),
  getProposal: get('zsd.governance.proposal("1")', 'client.governance.proposal("1")'),
  listProposalVotes: get('zsd.governance.votesOf("1")', 'client.governance.proposal_votes("1")'),
  getGovernanceHolder: get(`zsd.governance.holder("${ADDRESS}")`, `client.governance.holder("${ADDRESS}")`),
  castVote: get("zsd.governance.vote($body)", "client.governance.cast_vote($body)"),
  getVote: get(
    'zsd.governance.getVote("vote_6Tq1mZ8kP3xW5nB2cR7v")',
    'client.governance.vote("vote_6Tq1mZ8kP3xW5nB2cR7v")',
  ),
  queueProposal: get('zsd.governance.queue("1")', 'client.governance.queue("1")'),
  executeProposal: get('zsd.governance.execute("1")', 'client.governance.execute("1")'),
  getProposalAction: get(
    'zsd.governance.getAction("gact_3Hn8vK2xQ7mT5zR1pW6b")',
    'client.governance.action("gact_3Hn8vK2xQ7mT5zR1pW6b")',
  ),
  delegate: get("zsd.governance.delegate($body)", "client.governance.delegate($body)"),
  getDelegation: get(
    'zsd.governance.getDelegation("dlg_2Vb7nQ4xK9mT1zR6pW3s")',
    'client.governance.delegation("dlg_2Vb7nQ4xK9mT1zR6pW3s")',
  ),
};

/** Operations the SDKs do not call (probes, and the circuit's files the prover fetches): curl instead. */
export const CURL_ONLY = new Set(["getHealth", "getReadiness", "getCircuitWasm", "getCircuitProvingKey"]);

/** A JSON value as a Python literal. */
function python(value: unknown, indent = ""): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string" || typeof value === "number") return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) return `[${value.map((v) => python(v, indent)).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${python(v, inner)},`).join("\n")}\n${indent}}`;
}

/** A JSON value as a JS literal, keys unquoted where they may be. */
function js(value: unknown, indent = ""): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[${value.map((v) => js(v, indent)).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return "{}";
  const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k));
  return `{\n${entries.map(([k, v]) => `${inner}${key(k)}: ${js(v, inner)},`).join("\n")}\n${indent}}`;
}

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** The samples of one route, as `x-codeSamples` lists them. */
export function codeSamples(route: AnyRoute, base: string): CodeSample[] {
  const path = `/v1${route.path.replace(/:([A-Za-z]+)/g, "{$1}")}`;
  if (CURL_ONLY.has(route.operationId)) return [{ lang: "Shell", label: "curl", source: `curl ${base}${path}` }];
  const sample = CODE_SAMPLES[route.operationId];
  if (!sample) return [];
  const body = Object.values(route.requestExamples ?? {})[0]?.value as Record<string, unknown> | undefined;
  const fill = (text: string, literal: (value: unknown) => string) =>
    text.replace(/\$body(?:\.(\w+))?/g, (_, member: string | undefined) => {
      const value = member === undefined ? body : body?.[member];
      if (value === undefined)
        throw new Error(
          `${route.operationId}: its sample names $body${member ? `.${member}` : ""}, which its example lacks`,
        );
      return literal(value);
    });
  const lines = (text: string) => {
    const all = text.split("\n");
    return { comments: all.slice(0, -1), call: all.at(-1)! };
  };
  // Split before the example fills the call in: a literal spans lines of its own.
  const jsSample = lines(sample.js);
  const pySample = lines(sample.python);
  return [
    {
      lang: "JavaScript",
      label: "JS SDK",
      source: [
        'import { Zsd } from "@zsd/sdk/client";',
        "",
        "const zsd = new Zsd(process.env.ZSD_API_KEY);",
        ...jsSample.comments,
        `const answer = await ${fill(jsSample.call, js)};`,
      ].join("\n"),
    },
    {
      lang: "Python",
      label: "Python SDK",
      source: [
        "import os",
        "",
        "import zsd",
        "",
        'client = zsd.Client(os.environ["ZSD_API_KEY"])',
        ...pySample.comments,
        `answer = ${fill(pySample.call, python)}`,
      ].join("\n"),
    },
  ];
}
