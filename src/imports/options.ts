// The options of a contact import as its multipart form gives them (docs/api.md §12.9), checked
// before the import is created; the segments, topics and properties they name are checked against
// the store in the creating unit of work (`checkTargets`).
import type { ImportColumns, StoreReader, Subscription } from '../store';
import { type ApiError, errors } from '../errors';
import { isUuid } from '../ids';
import type { ImportForm } from '../schemas/contact-imports';

export interface ImportOptions {
  columns: ImportColumns;
  /** The type a property's mapping asks for, when it names one. */
  propertyTypes: Record<string, string>;
  on_conflict: 'upsert' | 'skip';
  segments: string[];
  topics: { id: string; subscription: Subscription }[];
}

/** `column_map` (docs/api.md §12.9): without one, the header names `email`, `first_name`, `last_name`, `unsubscribed`. */
function columnMap(map: ImportForm['column_map']): { columns: ImportColumns; propertyTypes: Record<string, string> } {
  const required: string[] = [];
  const propertyTypes: Record<string, string> = {};
  const named = (v: string | null | undefined, usual: string) => {
    if (v === undefined || v === null) return usual;
    required.push(v);
    return v;
  };
  const properties: Record<string, string> = {};
  for (const [key, m] of Object.entries(map?.properties ?? {})) {
    properties[key] = m.column;
    required.push(m.column);
    if (m.type !== undefined) propertyTypes[key] = m.type;
  }
  const columns = {
    email: named(map?.email, 'email'),
    first_name: named(map?.first_name, 'first_name'),
    last_name: named(map?.last_name, 'last_name'),
    unsubscribed: named(map?.unsubscribed, 'unsubscribed'),
    properties,
    required: [...new Set(required)],
  };
  return { columns, propertyTypes };
}

/** The options of the form, its fields' types checked by their schema (src/schemas/contact-imports.ts). */
export function importOptions(form: ImportForm): ImportOptions {
  const { columns, propertyTypes } = columnMap(form.column_map);
  const segments = (form.segments ?? []).map((s, i) => {
    const id = typeof s === 'string' ? s : s.id;
    if (id === undefined) throw errors.invalidField(`segments[${i}]`, 'must be an object with an `id`.');
    return id.toLowerCase();
  });
  return { columns, propertyTypes, on_conflict: form.on_conflict ?? 'skip', segments, topics: form.topics ?? [] };
}

/**
 * Inside the creating unit of work: every segment and topic named exists, and every mapped
 * property is defined, with the type its mapping names if it names one (a property is a string
 * or a number: a `boolean` mapping never fits). The error to answer, or null.
 */
export async function checkTargets(r: StoreReader, team: string, o: ImportOptions): Promise<ApiError | null> {
  for (const [i, id] of o.segments.entries())
    if (!isUuid(id) || !(await r.segments.get(team, id))) return errors.invalidField(`segments[${i}].id`, 'no segment with this id exists.');
  for (const [i, t] of o.topics.entries())
    if (!isUuid(t.id) || !(await r.topics.get(team, t.id))) return errors.invalidField(`topics[${i}].id`, 'no topic with this id exists.');
  for (const key of Object.keys(o.columns.properties)) {
    const def = await r.contactProperties.find('key', key, team);
    const field = `column_map.properties.${key}`;
    if (!def) return errors.invalidField(field, `no contact property \`${key}\` exists; create it with POST /contact-properties first.`);
    const asked = o.propertyTypes[key];
    if (asked !== undefined && asked !== def.type) return errors.invalidField(`${field}.type`, `the property \`${key}\` is of type \`${def.type}\`.`);
  }
  return null;
}
