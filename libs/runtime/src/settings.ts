/** A setting that must be a positive number; unset, or anything else, gives the fallback. */
export function positiveNumberSetting(
  config: Record<string, string | undefined>,
  name: string,
  fallback: number,
): number {
  const value = Number(config[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
