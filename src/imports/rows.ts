// The rows of a contact import (docs/api.md §12.9): each CSV record read against the header and
// the column map into a contact, or the reason it fails. A bad row is counted as failed with its
// reason and never stops the import.
import type { ContactImportRec, ImportCounts, PropertyValue, Tx } from '../store';
import type { PropertyDefs } from '../contacts/properties';
import { MAX_STRING_VALUE } from '../contacts/properties';
import { importContact, type ImportedContact } from '../contacts';
import { parseEmail } from '../mail/address';
import { isUuid } from '../ids';

/** The first failed rows kept on an import, with their reasons. */
export const MAX_FAILURES = 100;

/** One item of the file in order: a record, or a record the CSV parser could not read. */
export type Item = { row: number; fields: string[] } | { row: number; error: string };

const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n', '']);

/** Column name → index in the header (the first column of a name wins). */
export type HeaderIndex = Map<string, number>;

export function headerIndex(header: string[]): HeaderIndex {
  const index: HeaderIndex = new Map();
  header.forEach((name, i) => {
    if (!index.has(name.trim())) index.set(name.trim(), i);
  });
  return index;
}

/** Why a header cannot be imported with these columns (the whole import fails), or null. */
export function headerProblem(index: HeaderIndex, imp: Pick<ContactImportRec, 'columns'>): string | null {
  if (!index.has(imp.columns.email)) return `The file has no \`${imp.columns.email}\` column for the email address.`;
  for (const name of imp.columns.required) if (!index.has(name)) return `The file has no \`${name}\` column.`;
  return null;
}

/** A record as a contact, or the reason it cannot be one. */
export function readRow(
  fields: string[],
  header: HeaderIndex,
  width: number,
  imp: Pick<ContactImportRec, 'columns'>,
  defs: PropertyDefs,
): ImportedContact | string {
  if (fields.length !== width) return `The row has ${fields.length} fields; the header has ${width}.`;
  const cell = (name: string | null) => (name === null || !header.has(name) ? '' : fields[header.get(name)!].trim());
  const { columns } = imp;
  const email = cell(columns.email);
  if (!email) return 'The email address is missing.';
  if (!parseEmail(email)) return `\`${email.slice(0, 200)}\` is not an email address.`;
  const out: ImportedContact = { email, properties: {} };
  const first = cell(columns.first_name);
  const last = cell(columns.last_name);
  if (first) out.first_name = first;
  if (last) out.last_name = last;
  const unsub = cell(columns.unsubscribed).toLowerCase();
  if (TRUE.has(unsub)) out.unsubscribed = true;
  else if (unsub !== '' && FALSE.has(unsub)) out.unsubscribed = false;
  else if (unsub !== '') return `\`${unsub.slice(0, 50)}\` is not a value for \`unsubscribed\` (true or false).`;
  for (const [key, col] of Object.entries(columns.properties)) {
    const def = defs.get(key);
    const raw = cell(col);
    if (!def || raw === '') continue;
    let value: string | number = raw;
    if (def.type === 'number') {
      value = Number(raw);
      if (!Number.isFinite(value)) return `\`${raw.slice(0, 50)}\` is not a number for the property \`${key}\`.`;
    } else if (raw.length > MAX_STRING_VALUE) return `The value of the property \`${key}\` is longer than ${MAX_STRING_VALUE} characters.`;
    out.properties[key] = { value, type: def.type, property_id: def.id } satisfies PropertyValue;
  }
  return out;
}

/**
 * In the chunk's unit of work: every item of the chunk applied and counted. Segments and topics
 * deleted since the import was created are left out.
 */
export async function applyItems(
  tx: Tx,
  imp: ContactImportRec,
  items: Item[],
  ctx: { header: HeaderIndex; width: number; defs: PropertyDefs; at: string },
): Promise<{ counts: ImportCounts; failures: ContactImportRec['failures'] }> {
  const counts = { ...imp.counts };
  const failures = [...imp.failures];
  const fail = (row: number, reason: string) => {
    counts.failed++;
    if (failures.length < MAX_FAILURES) failures.push({ row, reason });
  };
  const segments: string[] = [];
  for (const s of imp.segments) if (isUuid(s) && (await tx.segments.get(imp.team_id, s))) segments.push(s);
  const topics: ContactImportRec['topics'] = [];
  for (const t of imp.topics) if (await tx.topics.get(imp.team_id, t.id)) topics.push(t);
  for (const item of items) {
    counts.total++;
    if ('error' in item) {
      fail(item.row, item.error);
      continue;
    }
    const c = readRow(item.fields, ctx.header, ctx.width, imp, ctx.defs);
    if (typeof c === 'string') {
      fail(item.row, c);
      continue;
    }
    counts[await importContact(tx, imp.team_id, c, { onConflict: imp.on_conflict, segments, topics, at: ctx.at })]++;
  }
  return { counts, failures };
}
