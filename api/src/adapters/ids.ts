import { randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` uniformly random base62 characters (≈ 5.95 bits each). */
export function base62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** A resource id such as `prf_…`: the prefix and 20 random base62 characters. */
export const randomId = (prefix: string) => `${prefix}_${base62(20)}`;
