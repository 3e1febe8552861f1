// The anonymity set of a mint: a mint publishes its collateral
// floor, and only the deposits of at least that amount could back it. Before
// proving, the mint flow asks the API how many there are and warns, through
// the caller's onWarning (never the console), when fewer than the minimum
// (ZSD_MIN_ANONYMITY, 20 by default) would hide the deposit.
import { formatZec } from "../units/index.ts";
import type { RelayResource } from "./resources.ts";

/** The count below which a floor is warned about, unless ZSD_MIN_ANONYMITY or the client's option says otherwise. */
export const DEFAULT_MIN_ANONYMITY = 20;

export interface AnonymityWarning {
  /** small_anonymity_set: fewer candidates than the minimum; anonymity_unknown: the API could not count them. */
  code: "small_anonymity_set" | "anonymity_unknown";
  /** The floor the proof will publish, in ZEC. */
  floor: string;
  /** Deposits a mint at this floor could spend (null when unknown). */
  candidates: number | null;
  minimum: number;
  message: string;
}

/** ZSD_MIN_ANONYMITY where there is an environment (Node), if it is a whole number. */
export function minAnonymityFromEnvironment(): number | undefined {
  const raw = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.ZSD_MIN_ANONYMITY;
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw)) throw new TypeError(`ZSD_MIN_ANONYMITY is a whole number of deposits, not "${raw}".`);
  return Number(raw);
}

/** The warning a mint proving `floorZat` deserves, if any. */
export async function anonymityWarning(
  relay: RelayResource,
  floorZat: bigint,
  minimum: number,
): Promise<AnonymityWarning | undefined> {
  const floor = formatZec(floorZat);
  let candidates: number;
  try {
    candidates = (await relay.anonymity(floor)).candidates;
  } catch (error) {
    return {
      code: "anonymity_unknown",
      floor,
      candidates: null,
      minimum,
      message: `Could not count the deposits a ${floor} ZEC floor leaves (${(error as Error).message}).`,
    };
  }
  if (candidates >= minimum) return undefined;
  return {
    code: "small_anonymity_set",
    floor,
    candidates,
    minimum,
    message:
      `Only ${candidates} deposit${candidates === 1 ? "" : "s"} could back a mint proving ${floor} ZEC ` +
      `(fewer than ${minimum}): anyone can narrow yours down to them. A lower floor (a smaller mint) hides it among more.`,
  };
}
