// Contact properties (docs/api.md §12.7): a team defines each key with a type and an optional
// fallback, and contacts may then carry a value for it. A stored value names the definition it
// was written under, so values of a deleted property are never shown again, even when a property
// with the same key is defined later. Values written before definitions existed (no
// `property_id`) show under a definition of the same key and type.
import type { ContactPropertyRec, ContactRec, PropertyType, PropertyValue, StoreReader } from '../store';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import type { CreateContactPropertyRequest, UpdateContactPropertyRequest } from '../schemas/contact-properties';

/** Posthorn: at most this many properties per team, and this long a string value. */
export const MAX_PROPERTIES = 100;
export const MAX_STRING_VALUE = 2000;
/** Contact fields of their own, which `{{{contact.<key>}}}` already names; and the one key a plain object cannot hold. */
const RESERVED = new Set(['email', 'first_name', 'last_name', 'unsubscribed', '__proto__']);

/** Definitions by key. */
export type PropertyDefs = Map<string, ContactPropertyRec>;

export async function propertyDefs(store: StoreReader, team: string): Promise<PropertyDefs> {
  return new Map((await store.contactProperties.all(team)).map((p) => [p.key, p]));
}

/** A value of `type` (`field` names it in the error), or the 422. */
function typedValue(field: string, type: PropertyType, v: unknown): string | number {
  if (type === 'number') {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw errors.invalidField(field, 'must be a number.');
    return v;
  }
  if (typeof v !== 'string') throw errors.invalidField(field, 'must be a string.');
  if (v.length > MAX_STRING_VALUE) throw errors.invalidField(field, `must be at most ${MAX_STRING_VALUE} characters.`);
  return v;
}

/**
 * A definition from a create body, its key's format and type checked by its schema
 * (src/schemas/contact-properties.ts); the key's uniqueness and the team's limit are checked by the
 * caller's unit of work.
 */
export function newProperty(team: string, body: CreateContactPropertyRequest): ContactPropertyRec {
  // `null` reads as not given (docs/api.md §1.4).
  if (body.key === null) throw errors.missingField('key');
  if (body.type === null) throw errors.missingField('type');
  const { key, type } = body;
  if (RESERVED.has(key.toLowerCase())) throw errors.invalidField('key', `\`${key}\` is a contact field of its own.`);
  const fallback = body.fallback_value === undefined || body.fallback_value === null ? null : typedValue('fallback_value', type, body.fallback_value);
  return { id: newId(), team_id: team, created_at: nowIso(), key, type, fallback_value: fallback };
}

/** A PATCH: only `fallback_value` changes (null clears it); `key` and `type` are fixed. */
export function propertyChanges(cur: ContactPropertyRec, body: UpdateContactPropertyRequest): ContactPropertyRec {
  for (const f of ['key', 'type'] as const)
    if (body[f] !== undefined && body[f] !== cur[f]) throw errors.invalidField(f, 'cannot be changed after the property is created.');
  if (body.fallback_value === undefined) return cur;
  return { ...cur, fallback_value: body.fallback_value === null ? null : typedValue('fallback_value', cur.type, body.fallback_value) };
}

/**
 * `properties` of a contact create or update (an object: its schema says so, or an automation's
 * step built it), checked against the definitions: defined keys, each value of its property's
 * type, or null to clear it.
 */
export function propertyValues(defs: PropertyDefs, given: Record<string, unknown> | undefined): Record<string, PropertyValue | null> {
  if (given === undefined) return {};
  const out: Record<string, PropertyValue | null> = {};
  for (const [key, v] of Object.entries(given)) {
    const def = defs.get(key);
    if (!def) throw errors.invalidField(`properties.${key}`, `no contact property \`${key}\` exists; create it with POST /contact-properties first.`);
    out[key] = v === null ? null : { value: typedValue(`properties.${key}`, def.type, v), type: def.type, property_id: def.id };
  }
  return out;
}

/** The contact's value of a property, if it has one written under this definition. */
export function propertyValue(c: ContactRec, def: ContactPropertyRec): string | number | undefined {
  const v = Object.hasOwn(c.properties, def.key) ? c.properties[def.key] : undefined;
  if (!v || v.type !== def.type || (v.property_id !== undefined && v.property_id !== def.id)) return undefined;
  return v.value;
}

/** `properties` of GET /contacts/{id}: the contact's values of the team's properties (docs/api.md §12.3). */
export function visibleProperties(c: ContactRec, defs: PropertyDefs): Record<string, { value: string | number; type: PropertyType }> {
  const out: Record<string, { value: string | number; type: PropertyType }> = {};
  for (const def of defs.values()) {
    const value = propertyValue(c, def);
    if (value !== undefined) out[def.key] = { value, type: def.type };
  }
  return out;
}
