// Custom events (docs/api.md §23): the events a team sends for a contact (POST /events/send), and
// the definitions it may give some of them — a name and a schema of its payload. A definition is
// optional (as in Resend, where a trigger may "type a new event name"): an event is its name, and
// a definition only adds a schema, so a send is checked against the definition when there is one
// (payload fields coerced to the schema's types). A send is committed as an automation trigger
// through the one event function (Events.trigger) before the 202: accepted means durable. Names
// beginning `resend:` are Posthorn's system events (a contact created, added to a segment). The
// types of the requests' fields are checked first, by their schemas (src/schemas/events.ts).
import { writeOrRefuse, type CustomEventRec, type EventSchema, type EventSchemaType, type Store, type StoreReader } from '../store';
import type { CreateEventRequest, SendEventRequest, UpdateEventRequest } from '../schemas/events';
import type { Events } from '../events';
import { ApiError, errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';
import { parseEmail } from '../mail/address';
import { parseIsoInstant } from '../sending/schedule';

/** System events (docs/api.md §24.6): triggers Posthorn commits itself; custom names may not begin `resend:`. */
export const SYSTEM_EVENTS = ['resend:contact.created', 'resend:contact.added_to_segment'] as const;
export const RESERVED_PREFIX = 'resend:';

/** Posthorn: a schema names at most this many fields; a payload is at most this large as JSON. */
export const MAX_SCHEMA_FIELDS = 50;
export const MAX_PAYLOAD_BYTES = 64 * 1024;

const FIELD = /^[A-Za-z0-9_-]{1,100}$/;

/** An event by id (a UUID) or name. */
export function findEvent(r: StoreReader, team: string, ref: string): Promise<CustomEventRec | undefined> {
  return isUuid(ref) ? r.customEvents.get(team, ref.toLowerCase()) : r.customEvents.find('name', ref, team);
}

/** 1 to 256 characters, not all white space, no control characters (U+0000–U+001F: as the create's schema says). */
const nameShaped = (v: string) => v.length >= 1 && v.length <= 256 && /\S/.test(v) && ![...v].some((c) => c.charCodeAt(0) < 0x20);

/**
 * An event name, defined or not (docs/api.md §23.2): 1 to 256 characters without control
 * characters, not a UUID and not `send` (a definition's name is a path segment beside ids and
 * `POST /events/send`: a name that could never be defined is refused everywhere). The reserved
 * prefix `resend:` is the caller's to check: system events are named where they may be.
 */
export function eventNameField(v: string, field: string): string {
  if (!nameShaped(v)) throw errors.invalidField(field, 'must be 1 to 256 characters without control characters.');
  if (isUuid(v)) throw errors.invalidField(field, 'an event name cannot be a UUID (paths take ids and names alike).');
  if (v === 'send') throw errors.invalidField(field, '`send` names the route POST /events/send.');
  return v;
}

/** `name` of a create (its length and characters are the schema's): not `resend:…`, and a name as every event's. */
function nameField(v: string | null): string {
  if (v === null) throw errors.missingField('name');
  if (v.startsWith(RESERVED_PREFIX)) throw errors.invalidField('name', 'event names cannot start with `resend:`, which is reserved for system events.');
  return eventNameField(v, 'name');
}

/** `schema` (its types are the schema's): at most 50 fields, each name of ASCII letters, digits, `_` or `-`. */
function schemaField(v: EventSchema | null | undefined): EventSchema | null {
  if (v === undefined || v === null) return null;
  const entries = Object.entries(v);
  if (entries.length > MAX_SCHEMA_FIELDS) throw errors.invalidField('schema', `may name at most ${MAX_SCHEMA_FIELDS} fields.`);
  const out: EventSchema = {};
  for (const [key, type] of entries) {
    if (!FIELD.test(key) || key === '__proto__') throw errors.invalidField(`schema.${key}`, 'field names are 1 to 100 ASCII letters, digits, `_` or `-`.');
    out[key] = type;
  }
  return out;
}

export async function createEvent(store: Store, team: string, body: CreateEventRequest): Promise<CustomEventRec> {
  const name = nameField(body.name);
  const schema = schemaField(body.schema);
  const rec: CustomEventRec = { id: newId(), team_id: team, created_at: nowIso(), name, schema, updated_at: null };
  return writeOrRefuse(store, async (tx) => {
    // Checked inside the unit of work: of two creates of one name, one wins.
    if (await tx.customEvents.find('name', name, team)) return errors.invalidField('name', `an event named \`${name}\` already exists.`);
    tx.customEvents.put(rec);
    return rec;
  });
}

/** PATCH: the schema only (null clears it); the name is fixed. */
export function updateEvent(store: Store, team: string, ref: string, body: UpdateEventRequest): Promise<CustomEventRec> {
  const schema = schemaField(body.schema);
  return writeOrRefuse(store, async (tx) => {
    const cur = await findEvent(tx, team, ref);
    if (!cur) return errors.notFound('Event');
    const next = { ...cur, schema, updated_at: nowIso() };
    tx.customEvents.put(next);
    return next;
  });
}

/**
 * Delete a definition; its id. Automations that trigger on the event or wait for it keep doing
 * so: the event is its name, and without a definition its payloads are taken unchecked.
 */
export function removeEvent(store: Store, team: string, ref: string): Promise<string> {
  return writeOrRefuse(store, async (tx) => {
    const cur = await findEvent(tx, team, ref);
    if (!cur) return errors.notFound('Event');
    tx.customEvents.remove(team, cur.id);
    return cur.id;
  });
}

/** A payload value coerced to its schema type (docs/api.md §23.3), or the 422 naming `payload.<key>`. */
function coerce(key: string, type: EventSchemaType, v: unknown): unknown {
  const bad = () => errors.invalidField(`payload.${key}`, `must be a ${type}: the event's schema says so.`);
  if (v === null) return null;
  switch (type) {
    case 'string':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw bad();
    case 'number': {
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (Number.isFinite(n)) return n;
      throw bad();
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
      throw bad();
    case 'date': {
      // An ISO 8601 date-time with offset, a calendar date (midnight UTC), or ms since the epoch: kept as ISO 8601 UTC.
      const ms =
        typeof v === 'number' && Number.isFinite(v)
          ? v
          : typeof v === 'string'
            ? (parseIsoInstant(v) ?? (/^\d{4}-\d{2}-\d{2}$/.test(v.trim()) ? parseIsoInstant(`${v.trim()}T00:00:00Z`) : null))
            : null;
      if (ms === null || !Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw bad();
      return new Date(ms).toISOString();
    }
  }
}

/** The payload of a send (an object: the schema's), checked and coerced to the definition's schema when there is one. */
function payloadOf(def: CustomEventRec | undefined, v: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (Buffer.byteLength(JSON.stringify(v)) > MAX_PAYLOAD_BYTES) throw errors.invalidField('payload', `must be at most ${MAX_PAYLOAD_BYTES / 1024} KB as JSON.`);
  if (!def?.schema) return v;
  const out = { ...v };
  for (const [key, type] of Object.entries(def.schema)) if (Object.hasOwn(out, key)) out[key] = coerce(key, type, out[key]);
  return out;
}

/**
 * POST /events/send (docs/api.md §23.3): `event` an event name (defined or not), exactly one of
 * `contact_id` (an existing contact) or `email`, `payload` matching the definition's schema when
 * the event has one. The trigger commits before this resolves.
 */
export async function sendEvent(deps: { store: Store; events: Events }, team: string, body: SendEventRequest): Promise<{ event: string }> {
  const { store, events } = deps;
  const { event: name, contact_id: id, email: address } = body;
  if (name === null) throw errors.missingField('event');
  const hasId = id !== undefined && id !== null;
  const hasEmail = address !== undefined && address !== null;
  if (hasId && hasEmail) throw errors.validation('Provide either `contact_id` or `email`, not both.');
  if (!hasId && !hasEmail) throw new ApiError(422, 'missing_required_field', 'Missing `contact_id` or `email` field.');
  let contactId: string | null = null;
  let email: string | null = null;
  // The schema checked that `contact_id` is a UUID.
  if (hasId) contactId = id.toLowerCase();
  else {
    const a = hasEmail ? parseEmail(address) : null;
    if (!a) throw errors.validation('Invalid `email` field. The email address needs to follow the `email@example.com` format.');
    email = a.address;
  }
  if (name.startsWith(RESERVED_PREFIX)) throw errors.invalidField('event', 'events beginning `resend:` are system events Posthorn sends itself.');
  eventNameField(name, 'event');
  const def = await store.customEvents.find('name', name, team);
  const payload = payloadOf(def, body.payload);
  await writeOrRefuse(store, async (tx) => {
    // Inside the unit of work: a contact deleted meanwhile is not triggered for.
    if (contactId && !(await tx.contacts.get(team, contactId))) return errors.invalidField('contact_id', 'no contact with this id exists.');
    await events.trigger(tx, team, { event: name, contact_id: contactId, email, payload });
    return null;
  });
  return { event: name };
}
