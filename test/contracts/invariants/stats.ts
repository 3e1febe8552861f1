// What the runs measured, printed after the last one: how close the chain's rounding came to its
// bounds, and how often each outcome occurred (a step that never succeeds tests little).
export const stats = {
  steps: 0,
  outcomes: new Map<string, number>(),
  maxSlack: 0n,
  maxSlackPerPosition: 0,
  maxDebtExcess: 0n,
  maxCollateralError: 0n,
  maxDebtError: 0n,
  inlineRedistributions: 0,
  splitChecks: 0,
  maxSplitShortfall: 0n,
  /** Redemptions paid pro rata out of one unspreadable position under 100% (and those it refused). */
  stuckRedemptions: 0,
  stuckRefused: 0,
  /** Redemptions refused for leaving fewer wei than debtors. */
  dustGuards: 0,
  /** Redistributions refused because the others hold under a millionth of the debt (not alone). */
  unspreadableRefusals: 0,
  /** Frames: epochs started while debt remained. */
  frames: 0,
  maxDebtSlack: 0n,
  ambiguousRedemptions: 0,
};
export const count = (key: string) => stats.outcomes.set(key, (stats.outcomes.get(key) ?? 0) + 1);

export function summary(): string {
  const outcomes = [...stats.outcomes.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  return [
    `invariants: ${stats.steps} steps`,
    `  rounding slack (backing + free − Σ collateral): max ${stats.maxSlack} zat, ${stats.maxSlackPerPosition.toFixed(2)} zat per position`,
    `  Σ debt − totalDebt: max ${stats.maxDebtExcess} wei`,
    `  model vs chain after redemptions/redistributions: collateral ${stats.maxCollateralError} zat, debt ${stats.maxDebtError} wei`,
    `  stuck redemptions ${stats.stuckRedemptions} (refused ${stats.stuckRefused}), dust guards ${stats.dustGuards}, unspreadable refusals ${stats.unspreadableRefusals}, frames ${stats.frames}, ambiguous redemptions ${stats.ambiguousRedemptions}, max debt slack ${stats.maxDebtSlack} wei`,
    `  inline redistributions ${stats.inlineRedistributions}, split checks ${stats.splitChecks} (max shortfall of the split ${stats.maxSplitShortfall} zat)`,
    ...outcomes.map(([k, v]) => `  ${k}: ${v}`),
  ].join("\n");
}
