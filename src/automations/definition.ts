// An automation's definition as Resend's SDK sends it (docs/api.md §24.2–§24.4): `steps` (a key,
// a type and its config) and `connections` between them. Everything that could make a run fail
// for a reason the definition already shows is refused here, at create or update, with the
// documented 422 naming the field: an unknown template, segment, topic or contact property;
// a template that is not published or lacks a value for a variable; a step type given a
// connection it cannot take; a loop of steps without a `delay` or `wait_for_event` (it would run
// for ever at once). The shapes — types of the fields, step types, sizes — are the wire schema's,
// checked first (src/schemas/automations.ts). An event a trigger or a wait names need not be
// defined: a definition only adds a schema to its payloads (custom-events.ts). Nothing here writes.
import type { AutomationConnection, AutomationStatus, AutomationStep, AutomationStepType, ConnectionType, StoreReader } from '../store';
import type { AutomationRequest, ConnectionInput, StepInput } from '../schemas/automations';
import { errors } from '../errors';
import { isUuid } from '../ids';
import { parseAddress } from '../mail/address';
import { findTemplate, neededVariables } from '../templates';
import { variableKey, checkValue } from '../templates/validate';
import { topicField } from '../topics';
import { sendingDomain } from '../sending/sender';
import { conditionRule } from './conditions';
import { durationField } from './durations';
import { isObject, given } from '../schemas/common';
import { isVar, pathField, type PathScope } from './context';
import { eventNameField, RESERVED_PREFIX, SYSTEM_EVENTS } from './custom-events';
import { OUTGOING } from './step-connections';

/** Steps that hold a run for a while: a loop must pass one. */
const WAITS: AutomationStepType[] = ['delay', 'wait_for_event'];

/** Template values Posthorn fills in itself for automation emails. */
export const SYSTEM_VALUES = ['RESEND_UNSUBSCRIBE_URL'];

/** The top-level fields of a create or update; a key left out was not given. */
export interface AutomationFields {
  name?: string;
  status?: AutomationStatus;
  steps?: StepInput[];
  connections?: ConnectionInput[];
}

/** A create's `name` and `steps` are required: left out (the schema's) or null, they are missing. */
export function automationFields(body: AutomationRequest, mode: 'create' | 'update'): AutomationFields {
  if (mode === 'create') {
    if (!given(body.name)) throw errors.missingField('name');
    if (!given(body.steps)) throw errors.missingField('steps');
  }
  const out: AutomationFields = {};
  if (given(body.name)) out.name = body.name;
  if (given(body.status)) out.status = body.status;
  if (given(body.steps)) out.steps = body.steps;
  if (given(body.connections)) out.connections = body.connections;
  else if (mode === 'create') out.connections = [];
  return out;
}

/** A checked definition: steps and connections as stored and shown, and the trigger's event name. */
export interface Definition {
  steps: AutomationStep[];
  connections: AutomationConnection[];
  trigger: string;
}

/**
 * Check `steps` and `connections` for team `team`. With `enabled`, the emails' `from` domains must
 * also be verified now: an enabled automation sends at once.
 */
export async function checkDefinition(
  r: StoreReader,
  team: string,
  rawSteps: StepInput[],
  rawConnections: ConnectionInput[],
  enabled: boolean,
): Promise<Definition> {
  // Keys and types first, so that steps' configs can name each other.
  const keys = new Set<string>();
  const shapes = rawSteps.map((s, i): Shape => {
    const field = `steps[${i}]`;
    if (!given(s.key)) throw errors.missingField(`${field}.key`);
    if (keys.has(s.key)) throw errors.invalidField(`${field}.key`, `\`${s.key}\` is the key of another step.`);
    keys.add(s.key);
    if (!given(s.type)) throw errors.missingField(`${field}.type`);
    return { key: s.key, type: s.type, config: s.config ?? {}, field };
  });
  const triggers = shapes.filter((s) => s.type === 'trigger');
  if (triggers.length === 0) throw errors.validation('An automation needs one `trigger` step: the event that starts it.');
  if (triggers.length > 1) throw errors.invalidField(`${triggers[1]!.field}.type`, 'an automation has one `trigger` step.');

  const properties = new Set((await r.contactProperties.all(team)).map((p) => p.key));
  const waitedEvents = new Set(
    shapes.filter((s) => s.type === 'wait_for_event' && typeof s.config.event_name === 'string').map((s) => s.config.event_name as string),
  );
  const scope: PathScope = { properties, waitedEvents };
  const steps: AutomationStep[] = [];
  for (const s of shapes) steps.push({ key: s.key, type: s.type, config: await stepConfig(r, team, s, scope, enabled) });
  const connections = checkConnections(shapes, rawConnections);
  return { steps, connections, trigger: steps.find((s) => s.type === 'trigger')!.config.event_name as string };
}

/** Connections: between existing steps, of a type their start can take, one per start and type, no instant loop. */
function checkConnections(shapes: { key: string; type: AutomationStepType }[], raw: ConnectionInput[]): AutomationConnection[] {
  const typeOf = new Map(shapes.map((s) => [s.key, s.type]));
  const seen = new Set<string>();
  const out = raw.map((c, i): AutomationConnection => {
    const field = `connections[${i}]`;
    for (const end of ['from', 'to'] as const) {
      if (!given(c[end])) throw errors.missingField(`${field}.${end}`);
      if (typeof c[end] !== 'string' || !typeOf.has(c[end])) throw errors.invalidField(`${field}.${end}`, `no step has the key \`${String(c[end])}\`.`);
    }
    const from = c.from as string;
    const to = c.to as string;
    const type = (given(c.type) ? c.type : 'default') as ConnectionType;
    const allowed = OUTGOING[typeOf.get(from)!];
    if (!allowed.includes(type))
      throw errors.invalidField(
        `${field}.type`,
        allowed.length
          ? `a \`${typeOf.get(from)}\` step continues by ${allowed.map((t) => `\`${t}\``).join(' or ')}.`
          : `a \`${typeOf.get(from)}\` step ends the run: nothing may follow it.`,
      );
    if (typeOf.get(to) === 'trigger') throw errors.invalidField(`${field}.to`, 'nothing leads to the `trigger` step: it is where runs start.');
    if (seen.has(`${from}\u0000${type}`)) throw errors.invalidField(field, `the step \`${from}\` already has a \`${type}\` connection.`);
    seen.add(`${from}\u0000${type}`);
    return { from, to, type };
  });
  const loop = instantLoop(typeOf, out);
  if (loop)
    throw errors.invalidField(
      'connections',
      `they make a loop (${loop.join(' → ')}) without a \`delay\` or \`wait_for_event\` step: a run would go round it for ever at once.`,
    );
  return out;
}

/** A cycle through steps none of which waits (depth-first search), as the keys along it; null when none. */
function instantLoop(typeOf: Map<string, AutomationStepType>, connections: AutomationConnection[]): string[] | null {
  const instant = (k: string) => !WAITS.includes(typeOf.get(k)!);
  const next = new Map<string, string[]>();
  for (const c of connections) if (instant(c.from) && instant(c.to)) next.set(c.from, [...(next.get(c.from) ?? []), c.to]);
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (k: string): string[] | null => {
    state.set(k, 'open');
    path.push(k);
    for (const n of next.get(k) ?? []) {
      if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n];
      if (!state.has(n)) {
        const found = visit(n);
        if (found) return found;
      }
    }
    path.pop();
    state.set(k, 'done');
    return null;
  };
  for (const k of next.keys())
    if (!state.has(k)) {
      const found = visit(k);
      if (found) return found;
    }
  return null;
}

type Shape = { key: string; type: AutomationStepType; config: Record<string, unknown>; field: string };

/** One step's config, checked against the team's events, templates, segments, topics and properties. */
async function stepConfig(r: StoreReader, team: string, s: Shape, scope: PathScope, enabled: boolean): Promise<Record<string, unknown>> {
  const c = s.config;
  const f = (name: string) => `${s.field}.config.${name}`;
  switch (s.type) {
    case 'trigger':
      return { event_name: eventName(c.event_name, f('event_name')) };
    case 'delay':
      if (!given(c.duration)) throw errors.missingField(f('duration'));
      durationField(c.duration, f('duration'));
      return { duration: c.duration };
    case 'wait_for_event': {
      const out: Record<string, unknown> = { event_name: eventName(c.event_name, f('event_name')) };
      if (given(c.timeout)) {
        durationField(c.timeout, f('timeout'));
        out.timeout = c.timeout;
      }
      // The filter reads the awaited event's payload as `event.*`.
      if (given(c.filter_rule)) out.filter_rule = conditionRule(c.filter_rule, f('filter_rule'), scope);
      return out;
    }
    case 'condition':
      return conditionRule(c, `${s.field}.config`, scope);
    case 'send_email':
      return sendEmailConfig(r, team, c, f, scope, enabled);
    case 'contact_update':
      return contactUpdateConfig(r, team, c, f, scope);
    case 'contact_delete':
      return {};
    case 'add_to_segment':
    case 'remove_from_segment': {
      if (!given(c.segment_id)) throw errors.missingField(f('segment_id'));
      const id = c.segment_id;
      if (!isUuid(id) || !(await r.segments.get(team, (id as string).toLowerCase())))
        throw errors.invalidField(f('segment_id'), 'no segment with this id exists.');
      return { segment_id: (id as string).toLowerCase() };
    }
  }
}

/**
 * An event name a trigger or wait names: a system event, or any event name (docs/api.md §23.2) —
 * defined or not: Resend's editor takes "an existing custom event or a new event name", and a
 * definition only adds a schema.
 */
function eventName(v: unknown, field: string): string {
  if (!given(v)) throw errors.missingField(field);
  if (typeof v !== 'string' || v === '') throw errors.invalidField(field, 'must be the name of an event.');
  if ((SYSTEM_EVENTS as readonly string[]).includes(v)) return v;
  if (v.startsWith(RESERVED_PREFIX))
    throw errors.invalidField(field, `\`resend:\` names system events; those an automation may start on or wait for are ${SYSTEM_EVENTS.join(', ')}.`);
  return eventNameField(v, field);
}

/** A value given to a template variable or a contact field: static, or `{ "var": "<path>" }`. */
function valueOrVar(v: unknown, field: string, scope: PathScope, allowed: ('string' | 'number' | 'boolean' | 'null')[]): unknown {
  if (isVar(v)) return { var: pathField(v.var, `${field}.var`, scope) };
  const type = v === null ? 'null' : typeof v;
  if (!(allowed as string[]).includes(type))
    throw errors.invalidField(field, `must be ${allowed.map((t) => (t === 'null' ? 'null' : `a ${t}`)).join(', ')} or \`{ "var": "event.<field>" }\`.`);
  return v;
}

async function sendEmailConfig(r: StoreReader, team: string, c: Record<string, unknown>, f: (n: string) => string, scope: PathScope, enabled: boolean) {
  if (!isObject(c.template)) {
    if (!given(c.template)) throw errors.missingField(f('template.id'));
    throw errors.invalidField(f('template'), 'must be an object with `id` and `variables`.');
  }
  const ref = c.template.id;
  if (!given(ref) || ref === '') throw errors.missingField(f('template.id'));
  if (typeof ref !== 'string') throw errors.invalidField(f('template.id'), 'must be the id or alias of a published template.');
  const t = await findTemplate(r, team, ref);
  if (!t) throw errors.invalidField(f('template.id'), `no template has the id or alias \`${ref}\`.`);
  if (!t.published)
    throw errors.invalidField(f('template.id'), `the template \`${ref}\` is not published: only published templates can be sent by an automation.`);
  const variables: Record<string, unknown> = {};
  if (given(c.template.variables)) {
    if (!isObject(c.template.variables)) throw errors.invalidField(f('template.variables'), 'must be an object of variable names and values.');
    for (const [key, value] of Object.entries(c.template.variables)) {
      const field = f(`template.variables.${key}`);
      variableKey(key, field);
      // Posthorn's templates take strings and numbers (docs/api.md §20.4): a boolean is written as text.
      const v = valueOrVar(value, field, scope, ['string', 'number', 'boolean']);
      const declared = t.published.variables.find((d) => d.key === key);
      if (!isVar(v) && typeof v !== 'boolean') checkValue(v, declared?.type ?? null, field);
      variables[key] = v;
    }
  }
  for (const name of neededVariables(t.published)) {
    const hasFallback = t.published.variables.some((d) => d.key === name && d.fallback_value !== null);
    if (!hasFallback && !Object.hasOwn(variables, name) && !SYSTEM_VALUES.includes(name)) throw errors.missingField(f(`template.variables.${name}`));
  }
  const out: Record<string, unknown> = { template: { id: t.id, variables } };
  const from = given(c.from) ? c.from : t.published.from;
  if (!given(from)) throw errors.missingField(f('from'));
  const address = typeof from === 'string' ? parseAddress(from) : null;
  if (!address) throw errors.invalidAddress(f('from'));
  if (given(c.from)) out.from = (c.from as string).trim();
  if (enabled) await sendingDomain(r, team, address);
  const subject = given(c.subject) ? c.subject : t.published.subject;
  if (!given(subject) || subject === '') throw errors.missingField(f('subject'));
  if (given(c.subject)) {
    if (typeof c.subject !== 'string') throw errors.invalidField(f('subject'), 'must be a string.');
    out.subject = c.subject;
  }
  if (given(c.reply_to)) {
    const list = typeof c.reply_to === 'string' ? [c.reply_to] : c.reply_to;
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string' && parseAddress(a))) throw errors.invalidAddress(f('reply_to'));
    out.reply_to = c.reply_to;
  }
  if (given(c.topic_id)) out.topic_id = (await topicField(r, team, c.topic_id, f('topic_id'))).id;
  return out;
}

async function contactUpdateConfig(r: StoreReader, team: string, c: Record<string, unknown>, f: (n: string) => string, scope: PathScope) {
  const out: Record<string, unknown> = {};
  for (const name of ['first_name', 'last_name'] as const) if (c[name] !== undefined) out[name] = valueOrVar(c[name], f(name), scope, ['string', 'null']);
  if (c.unsubscribed !== undefined) out.unsubscribed = valueOrVar(c.unsubscribed, f('unsubscribed'), scope, ['boolean']);
  if (c.properties !== undefined && c.properties !== null) {
    if (!isObject(c.properties)) throw errors.invalidField(f('properties'), 'must be an object of property keys and values.');
    const defs = new Map((await r.contactProperties.all(team)).map((p) => [p.key, p]));
    const props: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(c.properties)) {
      const field = f(`properties.${key}`);
      const def = defs.get(key);
      if (!def) throw errors.invalidField(field, `no contact property \`${key}\` exists; create it with POST /contact-properties first.`);
      props[key] = valueOrVar(value, field, scope, [def.type, 'null']);
    }
    out.properties = props;
  }
  if (Object.keys(out).length === 0)
    throw errors.invalidField(f('').slice(0, -1), 'a `contact_update` step sets at least one of `first_name`, `last_name`, `unsubscribed`, `properties`.');
  return out;
}
