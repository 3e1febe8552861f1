// Units of the system's amounts, so that no caller writes 18, 8 or 100n
// itself. viem's parseUnits/formatUnits do the decimal strings.
import { formatUnits, parseUnits } from "viem";

/** ZSD has 18 decimals; its smallest unit is called wei here, as ether's is. */
export const ZSD_DECIMALS = 18;
/** 1 ZEC = 10^8 zatoshi. */
export const ZEC_DECIMALS = 8;
/** ZEC/USD prices (the oracle's answer) have 8 decimals, as Chainlink's USD feeds do. */
export const PRICE_DECIMALS = 8;

export const WEI_PER_ZSD = 10n ** BigInt(ZSD_DECIMALS);
export const ZAT_PER_ZEC = 10n ** BigInt(ZEC_DECIMALS);

// zatoshi × price carries ZEC_DECIMALS + PRICE_DECIMALS decimals of USD; ZSD
// (one USD) carries ZSD_DECIMALS. StableMinter calls it ZAT_PRICE_TO_USD18.
const ZAT_PRICE_TO_USD18 = 10n ** BigInt(ZSD_DECIMALS - ZEC_DECIMALS - PRICE_DECIMALS);

/** The USD value, with ZSD's 18 decimals, of `zat` zatoshi at a ZEC/USD `price` (8 decimals): the minter's rule. */
export function usdValueOfZat(zat: bigint, price: bigint): bigint {
  return zat * price * ZAT_PRICE_TO_USD18;
}

/**
 * parseUnits rounds digits beyond `decimals` (1.999999999 ZEC → 2 ZEC): an
 * amount that cannot be represented exactly is refused instead, so that no
 * caller signs or sends a different amount than it was given.
 */
function parseExact(amount: string, decimals: number, unit: string): bigint {
  const fraction = amount.split(".")[1] ?? "";
  if (/[1-9]/.test(fraction.slice(decimals))) {
    throw new RangeError(`${unit} amounts have at most ${decimals} decimals: ${amount}`);
  }
  return parseUnits(amount, decimals);
}

/** "100.5" ZSD → wei. */
export const parseZsd = (amount: string): bigint => parseExact(amount, ZSD_DECIMALS, "ZSD");
/** wei → "100.5" ZSD (also for USD values with 18 decimals). */
export const formatZsd = (wei: bigint): string => formatUnits(wei, ZSD_DECIMALS);
/** "1.5" ZEC → zatoshi. */
export const parseZec = (amount: string): bigint => parseExact(amount, ZEC_DECIMALS, "ZEC");
/** zatoshi → "1.5" ZEC. */
export const formatZec = (zat: bigint): string => formatUnits(zat, ZEC_DECIMALS);
/** A ZEC/USD price with 8 decimals → "50.25". */
export const formatPrice = (price: bigint): string => formatUnits(price, PRICE_DECIMALS);
