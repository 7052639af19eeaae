// The options of a contact import as its multipart form gives them (docs/api.md §12.9):
// `column_map`, `segments` and `topics` are JSON strings, `on_conflict` a plain word. Checked
// before the import is created; the segments, topics and properties they name are checked against
// the store in the creating unit of work (`checkTargets`).
import type { ImportColumns, StoreReader, Subscription } from '../store';
import { type ApiError, errors } from '../errors';
import { isUuid } from '../ids';
import { choicesField } from '../topics';

export interface ImportOptions {
  columns: ImportColumns;
  /** The type a property's mapping asks for, when it names one. */
  propertyTypes: Record<string, string>;
  on_conflict: 'upsert' | 'skip';
  segments: string[];
  topics: { id: string; subscription: Subscription }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function json(field: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw errors.invalidField(field, 'must be a JSON-encoded string.');
  }
}

function column(field: string, v: unknown): string {
  if (typeof v !== 'string' || v === '') throw errors.invalidField(field, 'must be the name of a column of the file.');
  return v;
}

/** `column_map` (docs/api.md §12.9): without one, the header names `email`, `first_name`, `last_name`, `unsubscribed`. */
function columnMap(value: unknown): { columns: ImportColumns; propertyTypes: Record<string, string> } {
  const required: string[] = [];
  const propertyTypes: Record<string, string> = {};
  const named = (field: string, v: unknown, usual: string | null) => {
    if (v === undefined || v === null) return usual;
    const name = column(field, v);
    required.push(name);
    return name;
  };
  if (value === undefined)
    return {
      columns: { email: 'email', first_name: 'first_name', last_name: 'last_name', unsubscribed: 'unsubscribed', properties: {}, required },
      propertyTypes,
    };
  if (!isObject(value)) throw errors.invalidField('column_map', 'must be an object.');
  const properties: Record<string, string> = {};
  if (value.properties !== undefined && value.properties !== null) {
    if (!isObject(value.properties)) throw errors.invalidField('column_map.properties', 'must be an object of property keys.');
    for (const [key, m] of Object.entries(value.properties)) {
      const field = `column_map.properties.${key}`;
      if (!isObject(m)) throw errors.invalidField(field, 'must be an object with a `column`.');
      if (m.column === undefined) throw errors.missingField(`${field}.column`);
      properties[key] = column(`${field}.column`, m.column);
      required.push(properties[key]);
      if (m.type !== undefined && !['string', 'number', 'boolean'].includes(m.type as string))
        throw errors.invalidField(`${field}.type`, 'must be `string`, `number` or `boolean`.');
      if (m.type !== undefined) propertyTypes[key] = m.type as string;
    }
  }
  const columns = {
    email: named('column_map.email', value.email, 'email')!,
    first_name: named('column_map.first_name', value.first_name, 'first_name'),
    last_name: named('column_map.last_name', value.last_name, 'last_name'),
    unsubscribed: named('column_map.unsubscribed', value.unsubscribed, 'unsubscribed'),
    properties,
    required: [...new Set(required)],
  };
  return { columns, propertyTypes };
}

/** Every option of the form, or the documented 422 naming the first bad one. */
export function importOptions(fields: Map<string, string>): ImportOptions {
  const { columns, propertyTypes } = columnMap(json('column_map', fields.get('column_map')));
  const conflict = fields.get('on_conflict') ?? 'skip';
  if (conflict !== 'upsert' && conflict !== 'skip') throw errors.invalidField('on_conflict', 'must be `upsert` or `skip`.');
  const segs = json('segments', fields.get('segments'));
  if (segs !== undefined && !Array.isArray(segs)) throw errors.invalidField('segments', 'must be an array of `{ id }` objects.');
  const segments = (segs ?? []).map((s: unknown, i: number) => {
    const id = typeof s === 'string' ? s : isObject(s) ? s.id : undefined;
    if (typeof id !== 'string') throw errors.invalidField(`segments[${i}]`, 'must be an object with an `id`.');
    return id.toLowerCase();
  });
  const topicsJson = json('topics', fields.get('topics'));
  const topics = topicsJson === undefined ? [] : choicesField(topicsJson);
  return { columns, propertyTypes, on_conflict: conflict, segments, topics };
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
