// The real side of fast-check's model run, and what every step shares: a step sends its call and
// predicts each position; World.step then checks the chain against that and the model.
import type { AsyncCommand } from "fast-check";
import { STATUS } from "./constants.ts";
import type { Context } from "./context.ts";
import { type Chain, read, value } from "./chain.ts";
import { discover } from "./custody.ts";
import { checkInvariants, checkPositions, probe } from "./checks.ts";
import type { Expected, Model } from "./model.ts";
import { stats } from "./stats.ts";

export class World {
  chain: Chain | undefined;

  constructor(readonly ctx: Context) {}

  /** Runs one step: `body` sends it and says how each position changes; then everything is checked. */
  async step(m: Model, label: string, body: (c: Chain) => Promise<Map<bigint, Expected>>, probeAfter = false) {
    stats.steps++;
    const before = this.chain ?? (await read(this.ctx));
    this.chain = undefined;
    const expected = await body(before);
    const after = await read(this.ctx);
    await discover(this.ctx, m, label);
    checkPositions(before, after, expected, label, m.debtSlack);
    await checkInvariants(this.ctx, m, after, label);
    if (probeAfter) await probe(this.ctx, after, label);
    this.chain = after;
  }
}

/**
 * A step of a sequence: fast-check draws its options (arbitraries.ts), and `run` sends its call through
 * `World.step`. `toString` is what a counterexample prints, so it names every option that matters.
 */
export abstract class Step<Options extends object = object> implements AsyncCommand<Model, World> {
  constructor(readonly options: Options) {}
  check() {
    return true;
  }
  abstract run(m: Model, w: World): Promise<void>;
  abstract toString(): string;
}

/** The position a step acts on: by id, or (for keepers) riskiest first. */
export function pick(c: Chain, index: number, riskiest = false): bigint {
  const ids = c.positions.map((_, i) => BigInt(i + 1));
  if (riskiest) {
    const key = (id: bigint) => {
      const p = c.positions[Number(id) - 1]!;
      if (p.status !== STATUS.Open || p.debt === 0n) return Number.POSITIVE_INFINITY;
      return Number(value(c, p.collateralZat)) / Number(p.debt);
    };
    ids.sort((a, b) => key(a) - key(b));
  }
  return ids[index % ids.length]!;
}
