// Automations on the wire (docs/api.md §24): a definition — `steps` (a key, a type and its config)
// and the `connections` between them, as Resend's SDK sends them — and its runs. The shapes are
// checked here; what needs meaning — a step's config against its type and the team's events,
// templates, segments and properties, keys that repeat, one trigger, connections that fit their
// steps, loops — and the required fields given as null are src/automations/definition.ts. A key or
// type left out is "missing" there too: a schema node that words its own failure would word its
// absence as well.
import { Type } from '@sinclair/typebox';
import { AnyRecord, Deleted, Id, List, Nullable, PageQuery, Timestamp, type Static } from './common';
import { OneOf } from './literals';

const invalid = (field: string, why: string) => `Invalid \`${field}\` field: ${why}`;

export const STEP_TYPES = [
  'trigger',
  'delay',
  'send_email',
  'wait_for_event',
  'condition',
  'contact_update',
  'contact_delete',
  'add_to_segment',
  'remove_from_segment',
] as const;
const CONNECTION_TYPES = ['default', 'condition_met', 'condition_not_met', 'timeout', 'event_received'] as const;
export const RUN_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;
const RUN_STEP_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'waiting'] as const;

/** Posthorn: at most this many steps and connections per automation. */
export const MAX_STEPS = 100;
export const MAX_CONNECTIONS = 200;

const Name = Nullable(Type.String({ maxLength: 256, pattern: '\\S' }), { error: invalid('name', 'must be 1 to 256 characters.') });
const Status = OneOf(['enabled', 'disabled']);
const statusWording = { error: invalid('status', 'must be `enabled` or `disabled`.') };
/** `status` of a create or update: null reads as not given. */
const StatusField = Type.Optional(Nullable(Status, statusWording));

/** A step as sent. */
const StepInput = Type.Object(
  {
    key: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }), { error: invalid('{field}', 'must be 1 to 100 characters.') })),
    type: Type.Optional(Nullable(OneOf(STEP_TYPES), { error: invalid('{field}', `must be one of ${STEP_TYPES.join(', ')}.`) })),
    config: Type.Optional(
      Nullable(AnyRecord(Type.Unknown()), { error: invalid('{field}', 'must be an object.'), description: 'Of the step’s type: docs/api.md §24.3' }),
    ),
  },
  { error: invalid('{field}', 'must be an object with `key`, `type` and `config`.') },
);
export type StepInput = Static<typeof StepInput>;

/** A connection as sent: `from` and `to` name steps, `type` (default `default`) fits the step it leaves. */
const ConnectionInput = Type.Object(
  {
    from: Type.Optional(Type.Unknown({ description: 'A step’s key' })),
    to: Type.Optional(Type.Unknown({ description: 'A step’s key' })),
    type: Type.Optional(Type.Unknown({ description: CONNECTION_TYPES.join(', ') })),
  },
  { error: invalid('{field}', 'must be an object with `from`, `to` and `type`.') },
);
export type ConnectionInput = Static<typeof ConnectionInput>;

const Steps = Nullable(Type.Array(StepInput, { minItems: 1, maxItems: MAX_STEPS }), {
  error: invalid('steps', `must be an array of 1 to ${MAX_STEPS} steps.`),
});
const Connections = Nullable(Type.Array(ConnectionInput, { maxItems: MAX_CONNECTIONS }), {
  error: invalid('connections', `must be an array of at most ${MAX_CONNECTIONS} connections.`),
});

/** POST /automations (status disabled unless given). */
export const CreateAutomationRequest = Type.Object({
  name: Name,
  status: StatusField,
  steps: Steps,
  connections: Type.Optional(Connections),
});

/** PATCH /automations/{id}: the fields given (null: not given) change; the definition is checked again as a whole. */
export const UpdateAutomationRequest = Type.Object({
  name: Type.Optional(Name),
  status: StatusField,
  steps: Type.Optional(Steps),
  connections: Type.Optional(Connections),
});
export type AutomationRequest = Static<typeof CreateAutomationRequest> | Static<typeof UpdateAutomationRequest>;

export const AutomationListQuery = Type.Composite([PageQuery, Type.Object({ status: Type.Optional(OneOf(['enabled', 'disabled'], statusWording)) })]);

/** One status or several, comma-separated (as the SDK sends an array). */
export const RunListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    status: Type.Optional(
      Type.String({
        pattern: `^\\s*(${RUN_STATUSES.join('|')})\\s*(,\\s*(${RUN_STATUSES.join('|')})\\s*)*$`,
        error: `The \`status\` parameter must be one or more of ${RUN_STATUSES.join(', ')}, comma-separated.`,
      }),
    ),
  }),
]);

/** `updated_at`: the creation time until the first update (a string in Resend's document). */
const summaryFields = { id: Id, name: Type.String(), status: Status, created_at: Timestamp, updated_at: Timestamp };

/** An item of GET /automations (docs/api.md §24.1). */
export const AutomationSummary = Type.Object(summaryFields);
export type AutomationSummary = Static<typeof AutomationSummary>;

export const Automation = Type.Object({
  object: Type.Literal('automation'),
  ...summaryFields,
  steps: Type.Array(Type.Object({ key: Type.String(), type: OneOf(STEP_TYPES), config: AnyRecord(Type.Unknown()) })),
  connections: Type.Array(Type.Object({ from: Type.String(), to: Type.String(), type: OneOf(CONNECTION_TYPES) })),
});
export type Automation = Static<typeof Automation>;

export const AutomationList = List(AutomationSummary);
export const AutomationRef = Type.Object({ object: Type.Literal('automation'), id: Id });
export const AutomationDeleted = Deleted('automation');
export const AutomationStopped = Type.Object({ object: Type.Literal('automation'), id: Id, status: Status });

const runFields = {
  id: Id,
  status: OneOf(RUN_STATUSES),
  started_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
  created_at: Timestamp,
  /** Posthorn: whom the run is for (the runs list names it too, issue 35). */
  contact_id: Id,
};

/** An item of GET /automations/{id}/runs (docs/api.md §24.7). */
export const AutomationRunSummary = Type.Object(runFields);
export type AutomationRunSummary = Static<typeof AutomationRunSummary>;

/** A run with its step history. */
export const AutomationRun = Type.Object({
  object: Type.Literal('automation_run'),
  ...runFields,
  steps: Type.Array(
    Type.Object({
      key: Type.String(),
      type: OneOf(STEP_TYPES),
      status: OneOf(RUN_STEP_STATUSES),
      output: Nullable(AnyRecord(Type.Unknown())),
      error: Nullable(AnyRecord(Type.Unknown())),
      started_at: Nullable(Timestamp),
      completed_at: Nullable(Timestamp),
      created_at: Timestamp,
    }),
  ),
});
export type AutomationRun = Static<typeof AutomationRun>;

export const AutomationRunList = List(AutomationRunSummary);
