// The sandbox's failing-payout address. The simulated node (zcashd-sim) refuses every payment to
// it, as a wallet refuses a payment it will not make, so that a payout custody cannot make, and
// its redirect, can be tried on request. Only the simulated node knows it: custody, the relay and
// the API treat it as any other address, so a payout to it fails as a real refused one does
// (retried PAYOUT_MAX_ATTEMPTS times, then failed on-chain and held for its owner).

/** A valid testnet Sapling address ("refusedpayment" in its first letters) that no one holds the keys of. */
export const SANDBOX_REFUSED_ADDRESS =
  "ztestsapling1refusedpayment4mwxythpas7quvu0ar0fpye6klpzmjvn8snmx23lzj8km9fxctr2sj2vur2r3";

/** What the simulated node answers a z_sendmany paying it. */
export const REFUSED_MESSAGE =
  `The sandbox's node refuses every payment to ${SANDBOX_REFUSED_ADDRESS} ` +
  "(its failing-payout address: see the sandbox cheat sheet)";

/**
 * The sandbox's payout settings (`npm start` sets them): three refusals a second or two apart
 * before a payout is failed, where production's defaults try ten times over hours, so that a
 * payout to SANDBOX_REFUSED_ADDRESS is held for its owner within seconds of being due.
 */
export const SANDBOX_PAYOUT_RETRIES = { PAYOUT_MAX_ATTEMPTS: "3", PAYOUT_RETRY_MS: "1000" } as const;
