// Contacts and their segment memberships (docs/api.md §11, §12): the logic shared by the
// top-level `/contacts` routes and the legacy `/audiences/{id}/contacts` ones, so neither family
// repeats it. Contacts are one per email address and team, matched case-insensitively and stored
// with the casing first given.
import {
  writeOrRefuse,
  type Store,
  type StoreReader,
  type Tx,
  type ContactRec,
  type SegmentRec,
  type PageQuery,
  type PropertyValue,
  type Subscription,
} from '../store';
import type { Events } from '../events';
import { ApiError, errors } from '../errors';
import { newId, nowIso } from '../ids';
import { parseEmail } from '../mail/address';
import { setChoices, topicsChanged } from '../topics';
import { propertyDefs, propertyValues } from './properties';
import type { ContactSummary, UpdateContactRequest } from '../schemas/contacts';
import type { SegmentSummary } from '../schemas/segments';

/** What contact writes need: the store, and the event function for `contact.*`. */
export interface ContactDeps {
  store: Store;
  events: Events;
}

/** A contact named by a path segment: its id or its email. */
export type ContactRef = { id: string } | { email: string };

/** What a create or update may set: a missing key keeps the stored value, `null` clears a name. */
export type ContactFields = UpdateContactRequest;

/** A segment a create adds the contact to, and the error to answer when it does not exist. */
export interface SegmentTarget {
  id: string;
  ifMissing: ApiError;
}

// Views (docs/api.md §11, §12.3) that more than one route answers with.
export const segmentSummary = (s: SegmentRec): SegmentSummary => ({ id: s.id, name: s.name, created_at: s.created_at });

export const contactSummary = (c: ContactRec): ContactSummary => ({
  id: c.id,
  email: c.email,
  first_name: c.first_name,
  last_name: c.last_name,
  created_at: c.created_at,
  unsubscribed: c.unsubscribed,
});

/**
 * The one place a contact change is noticed: create-on-existing, PATCH (both route families) and
 * the unsubscribe link call it inside their unit of work, with the stored contact before and the
 * one about to be stored (new `updated_at`, memberships already added). When anything changed it
 * emits `contact.updated` (docs/api.md §14.2) and answers true: the caller stores it.
 */
export async function contactChanged(events: Events, tx: Tx, before: ContactRec, after: ContactRec, membershipsAdded = false): Promise<boolean> {
  const changed =
    membershipsAdded ||
    before.email !== after.email ||
    before.first_name !== after.first_name ||
    before.last_name !== after.last_name ||
    before.unsubscribed !== after.unsubscribed ||
    JSON.stringify(before.properties) !== JSON.stringify(after.properties);
  if (changed) await events.other(tx, after.team_id, 'contact.updated', after.id, await contactEventData(tx, after));
  return changed;
}

/** `data` of `contact.*` (docs/api.md §14.3): `audience_id` is the oldest membership, or null. */
export async function contactEventData(store: StoreReader, c: ContactRec): Promise<Record<string, unknown>> {
  const segment_ids = (await store.memberships.membershipsOf(c.team_id, c.id)).map((m) => m.segment_id);
  return {
    id: c.id,
    audience_id: segment_ids[0] ?? null,
    segment_ids,
    created_at: c.created_at,
    updated_at: c.updated_at,
    email: c.email,
    first_name: c.first_name,
    last_name: c.last_name,
    unsubscribed: c.unsubscribed,
  };
}

export function findContact(store: StoreReader, team: string, ref: ContactRef): Promise<ContactRec | undefined> {
  return 'id' in ref ? store.contacts.get(team, ref.id) : store.contacts.find('email', ref.email.toLowerCase(), team);
}

/** A contact on a legacy audience path: the audience must exist and the contact be a member of it. */
export async function findInAudience(store: StoreReader, team: string, audienceId: string, ref: ContactRef): Promise<ContactRec | ApiError> {
  if (!(await store.segments.get(team, audienceId))) return errors.notFound('Audience');
  const c = await findContact(store, team, ref);
  return c && (await store.memberships.has(team, audienceId, c.id)) ? c : errors.notFound('Contact');
}

/**
 * Create a contact, or update the one with the same email (201 with its id either way, docs/api.md
 * §12.2); `topics` are the contact's choices to store (docs/api.md §12.8).
 */
export async function upsertContact(
  deps: ContactDeps,
  team: string,
  fields: ContactFields & { email: string },
  segments: SegmentTarget[],
  topics: { id: string; subscription: Subscription }[] = [],
): Promise<string> {
  const { store, events } = deps;
  checkEmail(fields.email);
  const properties = propertyValues(await propertyDefs(store, team), fields.properties);
  return writeOrRefuse(store, async (tx) => {
    for (const s of segments) if (!(await tx.segments.get(team, s.id))) return s.ifMissing;
    const at = nowIso();
    const existing = await tx.contacts.find('email', fields.email.toLowerCase(), team);
    const base = existing ?? blankContact(team, fields.email, at);
    // The stored email keeps the casing it was first given.
    const next = apply(base, { ...fields, email: base.email }, properties);
    // Topics are checked before anything is written: an unknown one writes nothing.
    const changedTopics = await setChoices(tx, team, base.id, topics);
    if (changedTopics instanceof ApiError) return changedTopics;
    let added = false;
    for (const s of segments) added = (await addToSegment(events, tx, team, s.id, base.id, at)) || added;
    if (!existing) {
      await addContact(events, tx, next);
      await events.trigger(tx, team, { event: 'resend:contact.created', contact_id: base.id, payload: { email: next.email } }, { ifHeard: true });
    } else {
      const updated = { ...next, updated_at: at };
      if (await contactChanged(events, tx, existing, updated, added)) tx.contacts.put(updated);
      await topicsChanged(events, tx, updated, changedTopics);
    }
    return base.id;
  });
}

/**
 * In a unit of work: add a membership (an existing one is left as it is); a new one triggers the
 * automations listening for `resend:contact.added_to_segment` (docs/api.md §24.6). True when new.
 */
export async function addToSegment(events: Events, tx: Tx, team: string, segmentId: string, contactId: string, at: string): Promise<boolean> {
  if (!(await tx.memberships.add(team, segmentId, contactId, at))) return false;
  await events.trigger(tx, team, { event: 'resend:contact.added_to_segment', contact_id: contactId, payload: { segment_id: segmentId } }, { ifHeard: true });
  return true;
}

/**
 * In a unit of work: store a new contact, with `contact.created` (docs/api.md §14.2) — after its
 * memberships, which the payload names. Imports do not come here: they emit nothing (§12.9).
 */
export async function addContact(events: Events, tx: Tx, c: ContactRec): Promise<void> {
  tx.contacts.put(c);
  await events.other(tx, c.team_id, 'contact.created', c.id, await contactEventData(tx, c));
}

/** A new contact with nothing but its address. */
export function blankContact(team: string, email: string, at: string): ContactRec {
  return { id: newId(), team_id: team, created_at: at, updated_at: at, email, first_name: null, last_name: null, unsubscribed: false, properties: {} };
}

/** One row of a contact import, its fields read and checked (docs/api.md §12.9). */
export interface ImportedContact {
  email: string;
  first_name?: string;
  last_name?: string;
  unsubscribed?: boolean;
  properties: Record<string, PropertyValue>;
}

/**
 * In an import's unit of work: create the contact, or — when the address exists — leave it
 * (`skip`) or update it with the row's fields (`upsert`); either way a written contact joins the
 * import's segments and takes its topic choices. Imports emit no contact events (docs/api.md §12.9).
 */
export async function importContact(
  tx: Tx,
  team: string,
  row: ImportedContact,
  opts: { onConflict: 'upsert' | 'skip'; segments: string[]; topics: { id: string; subscription: Subscription }[]; at: string },
): Promise<'created' | 'updated' | 'skipped'> {
  const existing = await tx.contacts.find('email', row.email.toLowerCase(), team);
  if (existing && opts.onConflict === 'skip') return 'skipped';
  const base = existing ?? blankContact(team, row.email, opts.at);
  const next = { ...apply(base, { ...row, email: base.email }, row.properties), updated_at: opts.at };
  tx.contacts.put(next);
  for (const s of opts.segments) await tx.memberships.add(team, s, base.id, opts.at);
  for (const t of opts.topics) tx.topicChoices.set(team, base.id, t.id, t.subscription);
  return existing ? 'updated' : 'created';
}

/** Update a contact found by id or email, on a legacy audience path when `audienceId` is given (docs/api.md §12.4). */
export async function updateContact(
  deps: ContactDeps,
  team: string,
  ref: ContactRef,
  fields: ContactFields,
  audienceId?: string,
  /** Also in the unit of work, when the contact did change. */
  onChange?: (tx: Tx, contact: ContactRec) => Promise<void>,
): Promise<string> {
  const { store, events } = deps;
  if (fields.email !== undefined) checkEmail(fields.email);
  const properties = propertyValues(await propertyDefs(store, team), fields.properties);
  return writeOrRefuse(store, async (tx) => {
    const cur = audienceId === undefined ? ((await findContact(tx, team, ref)) ?? errors.notFound('Contact')) : await findInAudience(tx, team, audienceId, ref);
    if (cur instanceof ApiError) return cur;
    if (fields.email !== undefined) {
      const holder = await tx.contacts.find('email', fields.email.toLowerCase(), team);
      if (holder && holder.id !== cur.id) return errors.invalidField('email', 'another contact already uses this email address.');
    }
    const next = await changeContact(events, tx, cur, fields, properties);
    if (next) await onChange?.(tx, next);
    return cur.id;
  });
}

/**
 * In a unit of work: `fields` over the stored contact as an update applies them (`properties`
 * checked by propertyValues); stored, with `contact.updated`, when anything changed. The contact
 * as stored now, or null when nothing changed.
 */
export async function changeContact(
  events: Events,
  tx: Tx,
  cur: ContactRec,
  fields: ContactFields,
  properties: Record<string, PropertyValue | null>,
): Promise<ContactRec | null> {
  const next = { ...apply(cur, fields, properties), updated_at: nowIso() };
  if (!(await contactChanged(events, tx, cur, next))) return null;
  tx.contacts.put(next);
  return next;
}

/** Delete a contact and all its memberships; its id, or null when nothing matched (docs/api.md §12.5). */
export function deleteContact(deps: ContactDeps, team: string, ref: ContactRef): Promise<string | null> {
  return deps.store.write(async (tx) => {
    const c = await findContact(tx, team, ref);
    if (!c) return null;
    await removeContact(deps.events, tx, c);
    return c.id;
  });
}

/** In a unit of work: the contact goes, with its memberships and topic choices, and `contact.deleted` (naming the segments it was in). */
export async function removeContact(events: Events, tx: Tx, c: ContactRec): Promise<void> {
  const data = await contactEventData(tx, c);
  await tx.memberships.removeContact(c.team_id, c.id);
  await tx.topicChoices.removeContact(c.team_id, c.id);
  tx.contacts.remove(c.team_id, c.id);
  await events.other(tx, c.team_id, 'contact.deleted', c.id, data);
}

/** Posthorn's search of contacts (docs/api.md §12.1): `search` in the email or the name, case-insensitive. */
export function contactMatches(search: string): (c: ContactRec) => boolean {
  const text = search.toLowerCase();
  return (c) => [c.email, c.first_name ?? '', c.last_name ?? ''].join(' ').toLowerCase().includes(text);
}

/**
 * A page of contacts, of one segment when given. `search` (Posthorn) keeps those whose email or
 * name contains the text, case-insensitively; it applies to the team's contacts.
 */
export async function listContacts(store: StoreReader, team: string, q: PageQuery, segmentId?: string, search?: string) {
  if (search) {
    const matches = contactMatches(search);
    return store.contacts.page(team, q, null, (c) => (matches(c) ? contactSummary(c) : undefined));
  }
  if (segmentId === undefined) return store.contacts.page(team, q, null, contactSummary);
  const page = await store.memberships.pageContacts(team, segmentId, q);
  return { has_more: page.has_more, data: page.data.map(contactSummary) };
}

function checkEmail(email: string): void {
  if (!parseEmail(email)) throw errors.validation('Invalid `email` field. The email address needs to follow the `email@example.com` format.');
}

/** Given fields over a stored contact; properties merge key by key (null removes one). */
function apply(base: ContactRec, f: ContactFields, given: Record<string, PropertyValue | null>): ContactRec {
  const properties: Record<string, PropertyValue> = { ...base.properties };
  for (const [key, value] of Object.entries(given)) {
    if (value === null) delete properties[key];
    else properties[key] = value;
  }
  return {
    ...base,
    email: f.email ?? base.email,
    first_name: f.first_name !== undefined ? f.first_name : base.first_name,
    last_name: f.last_name !== undefined ? f.last_name : base.last_name,
    unsubscribed: f.unsubscribed ?? base.unsubscribed,
    properties,
  };
}
