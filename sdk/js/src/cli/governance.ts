// `zsd governance …`: proposals read from the API; delegations and ballots
// signed here with ZSD_PRIVATE_KEY (EIP-712) and relayed gas-free; proposals
// sent on-chain from that key's account, which pays the gas; a succeeded
// proposal queued and executed through the relay, which needs no key at all.
// options.ts has checked every flag and positional before this module is loaded.
import type { Address, LocalAccount } from "viem";
import type { Support, Zsd } from "../client/index.ts";
import { UsageError, type Values } from "./options.ts";

export interface GovernanceContext {
  values: Values;
  out: (result: unknown, human: string) => void;
  progress: (line: string) => void;
  signer: (required: boolean) => LocalAccount | undefined;
}

/**
 * How long `governance vote`, `queue` and `execute` wait by default for the governor to take them: voting to
 * open, to end, the timelock's delay (the local chain: seconds; a chain with real delays: run them again later).
 */
const DEFAULT_OPENING_WAIT_SECONDS = 600;

type Proposal = Awaited<ReturnType<Zsd["governance"]["proposal"]>>;

const proposalLine = (p: Omit<Proposal, "votes">) =>
  `${p.id}  ${p.state.padEnd(9)} ${p.title}\n` +
  `  for ${p.tally.for}, against ${p.tally.against}, abstain ${p.tally.abstain} (quorum ${p.quorum}); ` +
  `voting from block ${p.start.block + 1} to ${p.end.block}`;

export async function governance(zsd: Zsd, args: string[], c: GovernanceContext): Promise<void> {
  const [sub = "list", id, support] = args;
  const { values, out, progress } = c;
  switch (sub) {
    case "list": {
      const page = await zsd.governance.overview();
      const p = page.parameters;
      return out(
        page,
        [
          `governor ${p.governor}, token ${p.token}: voting opens ${p.votingDelayBlocks} block(s) after a proposal and ` +
            `lasts ${p.votingPeriodBlocks}; quorum ${p.quorum} votes, proposal threshold ${p.proposalThreshold}`,
          ...(page.data.length === 0
            ? ["no proposals yet: zsd governance propose makes one"]
            : page.data.map(proposalLine)),
        ].join("\n"),
      );
    }
    case "show": {
      const p = await zsd.governance.proposal(id!);
      const calls = p.calls.map((call) => `  calls ${call.summary ?? `${call.target} ${call.calldata}`}`);
      return out(p, [proposalLine(p), ...calls].join("\n"));
    }
    case "holder": {
      const address = (id as Address | undefined) ?? c.signer(false)?.address;
      if (!address) throw new UsageError("zsd governance holder <0x…> (or set ZSD_PRIVATE_KEY)");
      const h = await zsd.governance.holder(address);
      return out(
        h,
        `${h.address}: ${h.balance} ZSDG, ${h.votes} votes, ` +
          (h.delegate ? `delegated to ${h.delegate}` : "not delegated (its tokens count once it delegates)"),
      );
    }
    case "delegate": {
      const signer = c.signer(true)!;
      const delegatee = (values.delegatee as Address | undefined) ?? signer.address;
      progress(`signing a delegation of ${signer.address}'s votes to ${delegatee}…`);
      const d = await zsd.delegateVotes({
        signer,
        delegatee,
        onProgress: (step) => progress(`delegation ${step.id}: ${step.status}`),
      });
      const h = await zsd.governance.holder(delegatee);
      return out(
        d,
        `delegated ${signer.address}'s votes to ${d.delegatee} (${d.delegationId}, tx ${d.txHash}); ` +
          `${d.delegatee} now has ${h.votes} votes`,
      );
    }
    case "propose": {
      const account = c.signer(true)!;
      progress(`sending the proposal from ${account.address}…`);
      const p = await zsd.propose({
        account,
        title: values.title!,
        description: values.description,
        calls: values.call!,
        rpcUrl: values["rpc-url"] ?? process.env.ZSD_RPC_URL,
      });
      return out(
        p,
        `proposal ${p.proposalId} (tx ${p.txHash}): votes count as delegated at block ${p.voteStart}; ` +
          `voting is open from block ${p.voteStart + 1} to ${p.voteEnd}\n` +
          `vote with: zsd governance vote ${p.proposalId} for`,
      );
    }
    case "vote": {
      const signer = c.signer(true)!;
      progress(`signing a ballot ${support} as ${signer.address}…`);
      const waitSeconds = values["no-wait"] ? 0 : Number(values.wait ?? DEFAULT_OPENING_WAIT_SECONDS);
      let told = 0;
      const v = await zsd.vote({
        proposalId: id!,
        support: support as Support,
        reason: values.reason,
        signer,
        waitForOpeningMs: waitSeconds * 1000,
        // Said at once, then every 10 s: a silent wait of minutes reads as a hung command.
        onWaiting: (w) => {
          if (Date.now() - told < 10_000) return;
          const opens =
            w.opensAfterBlock === null
              ? "voting has not opened yet"
              : `voting opens after block ${w.opensAfterBlock} (${w.estimated ? "about " : ""}${w.at})`;
          progress(
            told === 0
              ? `proposal ${w.proposalId} is pending: ${opens}; waiting up to ${waitSeconds} s (--no-wait not to)…`
              : `still pending: ${opens}…`,
          );
          told = Date.now();
        },
        onProgress: (step) => progress(`vote ${step.id}: ${step.status}`),
      });
      return out(v, `counted ${v.weight} votes ${v.support} proposal ${v.proposalId} (${v.voteId}, tx ${v.txHash})`);
    }
    case "queue":
    case "execute": {
      const waitSeconds = values["no-wait"] ? 0 : Number(values.wait ?? DEFAULT_OPENING_WAIT_SECONDS);
      let told = 0;
      const params = {
        proposalId: id!,
        waitMs: waitSeconds * 1000,
        // Said at once, then every 10 s: a silent wait of minutes reads as a hung command.
        onWaiting: (w: {
          proposalState: string;
          until: string | null;
          endBlock: number | null;
          estimated: boolean;
        }) => {
          if (Date.now() - told < 10_000) return;
          const until = w.until === null ? "" : ` (${w.estimated ? "about " : ""}${w.until})`;
          const what =
            sub === "queue"
              ? `proposal ${id} is ${w.proposalState}: ${
                  w.endBlock === null ? "voting has not ended yet" : `voting ends after block ${w.endBlock}${until}`
                }`
              : `proposal ${id} is queued in the timelock until ${w.until ?? "its eta"}`;
          progress(
            told === 0 ? `${what}; waiting up to ${waitSeconds} s (--no-wait not to)…` : `still waiting: ${what}…`,
          );
          told = Date.now();
        },
        onProgress: (step: { id: string; status: string }) => progress(`${sub} ${step.id}: ${step.status}`),
      };
      if (sub === "queue") {
        const a = await zsd.queueProposal(params);
        return out(
          a,
          `queued proposal ${a.proposalId} in the timelock (${a.actionId}, tx ${a.txHash}): executable from ${a.eta}\n` +
            `execute with: zsd governance execute ${a.proposalId}`,
        );
      }
      const a = await zsd.executeProposal(params);
      const p = await zsd.governance.proposal(a.proposalId);
      const calls = p.calls.map((call) => call.summary ?? `${call.target} ${call.calldata}`).join(", ");
      return out(a, `executed proposal ${a.proposalId} (${a.actionId}, tx ${a.txHash}): ${calls}`);
    }
    default:
      throw new UsageError(`unknown governance command ${sub}`);
  }
}
