// What a run's steps can read (docs/api.md §24.4): `event.*` (the trigger's payload), `contact.*`
// (the contact's fields and property values) and `wait_events.<event name>.*` (payloads of events
// a `wait_for_event` step received) — in conditions and filter rules (`field`) and as dynamic
// values of template variables and contact updates (`{ "var": "…" }`). Paths are checked when an
// automation is created, looked up when a run executes the step.
import type { ContactRec } from '../store';
import { errors } from '../errors';
import { isObject } from '../schemas/common';
import { visibleProperties, type PropertyDefs } from '../contacts/properties';

/** The values a path is looked up in. */
export interface RunContext {
  event: Record<string, unknown>;
  contact: Record<string, unknown>;
  wait_events: Record<string, Record<string, unknown>>;
}

/** The contact's own fields a path may name besides its properties. */
export const CONTACT_FIELDS = ['id', 'email', 'first_name', 'last_name', 'unsubscribed'];

const NAMESPACES = ['event', 'contact', 'wait_events'] as const;

/** What an automation being checked lets paths name. */
export interface PathScope {
  /** The team's contact property keys. */
  properties: ReadonlySet<string>;
  /** Names of the events its `wait_for_event` steps wait for. */
  waitedEvents: ReadonlySet<string>;
}

/**
 * A path as a condition or `{ "var" }` writes it, checked: `event.<field>[.<field>…]`,
 * `contact.<field or property key>`, `wait_events.<waited event>.<field>[…]`.
 */
export function pathField(v: unknown, field: string, scope: PathScope): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 300)
    throw errors.invalidField(field, 'must be a path such as `event.plan`, `contact.first_name` or `wait_events.<event name>.<field>`.');
  const dot = v.indexOf('.');
  const ns = dot < 0 ? v : v.slice(0, dot);
  const rest = dot < 0 ? '' : v.slice(dot + 1);
  if (!(NAMESPACES as readonly string[]).includes(ns) || rest === '')
    throw errors.invalidField(field, 'must start with `event.`, `contact.` or `wait_events.` and name a field.');
  if (ns === 'contact' && !CONTACT_FIELDS.includes(rest) && !scope.properties.has(rest))
    throw errors.invalidField(field, `\`${rest}\` is neither a contact field (${CONTACT_FIELDS.join(', ')}) nor a contact property of the team.`);
  if (ns === 'wait_events') {
    const name = [...scope.waitedEvents].find((e) => rest.startsWith(`${e}.`) && rest.length > e.length + 1);
    if (!name)
      throw errors.invalidField(
        field,
        'must name an event a `wait_for_event` step of this automation waits for, then a field: `wait_events.<event name>.<field>`.',
      );
  }
  return v;
}

/** The value a checked path names in `ctx`; undefined when there is none. Own properties only. */
export function lookup(ctx: RunContext, path: string): unknown {
  const dot = path.indexOf('.');
  const ns = path.slice(0, dot);
  const rest = path.slice(dot + 1);
  if (ns === 'contact') return Object.hasOwn(ctx.contact, rest) ? ctx.contact[rest] : undefined;
  let from: unknown;
  let parts: string[];
  if (ns === 'event') {
    from = ctx.event;
    parts = rest.split('.');
  } else {
    // The event name may hold dots: the longest received name the path starts with.
    const name = Object.keys(ctx.wait_events)
      .filter((e) => rest.startsWith(`${e}.`))
      .sort((a, b) => b.length - a.length)[0];
    if (name === undefined) return undefined;
    from = ctx.wait_events[name];
    parts = rest.slice(name.length + 1).split('.');
  }
  for (const p of parts) {
    if (!isObject(from) || !Object.hasOwn(from, p)) return undefined;
    from = from[p];
  }
  return from;
}

/** A contact as paths see it: its own fields and its property values (docs/api.md §12.7). */
export function contactScope(c: ContactRec, defs: PropertyDefs): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, { value }] of Object.entries(visibleProperties(c, defs))) out[key] = value;
  Object.assign(out, { id: c.id, email: c.email, first_name: c.first_name, last_name: c.last_name, unsubscribed: c.unsubscribed });
  return out;
}

/** `{ "var": "<path>" }`: a dynamic value. */
export function isVar(v: unknown): v is { var: string } {
  return isObject(v) && Object.keys(v).length === 1 && Object.hasOwn(v, 'var');
}
