/** Form values to API fields: empty inputs are left out, numbers parsed (a bad number is sent as text for the API to refuse). */
export const text = (value: string | undefined) =>
  value === undefined || value.trim() === '' ? undefined : value.trim();
export const nullableText = (value: string | undefined) => text(value) ?? null;
export function num(value: string | undefined): number | string | undefined {
  const given = text(value);
  if (given === undefined) return undefined;
  return /^-?\d+$/.test(given) ? Number(given) : given;
}
export const nullableNum = (value: string | undefined) => num(value) ?? null;
export const checked = (value: string | undefined) => value === 'on' || value === 'true';
/** A datetime-local input (taken as UTC) to ISO. */
export const isoFrom = (value: string | undefined) => {
  const given = text(value);
  if (!given) return undefined;
  const date = new Date(given.endsWith('Z') ? given : `${given}Z`);
  return Number.isNaN(date.getTime()) ? given : date.toISOString();
};
export const prefill = (form: Record<string, string> | undefined, name: string, fallback?: string | number | null) =>
  form?.[name] ?? (fallback === null || fallback === undefined ? undefined : String(fallback));
