// Record shapes of custom events and automations (docs/api.md §23–§24): the event definitions a
// team sends, its automations (steps and connections as Resend's API takes them), their runs —
// each run's state is what the back office advances — and the triggers the ways in commit for it.
import type { Rec } from './interface';

/** Types a custom event's schema gives its payload fields (docs/api.md §23.2). */
export type EventSchemaType = 'string' | 'number' | 'boolean' | 'date';
export type EventSchema = Record<string, EventSchemaType>;

/** A custom event definition: sends of `name` are checked (and coerced) against `schema`. */
export interface CustomEventRec extends Rec {
  name: string;
  schema: EventSchema | null;
  updated_at: string | null;
}

export type AutomationStepType =
  | 'trigger'
  | 'delay'
  | 'send_email'
  | 'wait_for_event'
  | 'condition'
  | 'contact_update'
  | 'contact_delete'
  | 'add_to_segment'
  | 'remove_from_segment';

export type ConnectionType = 'default' | 'condition_met' | 'condition_not_met' | 'timeout' | 'event_received';

/** A step as the API takes and shows it: `config` in Resend's snake_case form, checked at create. */
export interface AutomationStep {
  key: string;
  type: AutomationStepType;
  config: Record<string, unknown>;
}

export interface AutomationConnection {
  from: string;
  to: string;
  type: ConnectionType;
}

export type AutomationStatus = 'enabled' | 'disabled';

export interface AutomationRec extends Rec {
  name: string;
  status: AutomationStatus;
  updated_at: string | null;
  steps: AutomationStep[];
  connections: AutomationConnection[];
  /** The trigger step's event name: indexed while the automation is enabled. */
  trigger: string;
  /** When `stop` last ran: runs started before it are cancelled (in the background). */
  stopped_at: string | null;
}

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled';
export type RunStepStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'waiting';

/** One entry of a run's step history (Resend's run step). */
export interface RunStepRec {
  key: string;
  type: AutomationStepType;
  status: RunStepStatus;
  output: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

/**
 * Where a running run stands: `ready` (execute step `at` when due), `delaying` (a delay ends at
 * `due`), `waiting` (for `waiting_for`, until the timeout at `due`), `paused` (its automation was
 * disabled: nothing due until it is enabled again), `done` (status is final).
 */
export type RunState = 'ready' | 'delaying' | 'waiting' | 'paused' | 'done';

export interface AutomationRunRec extends Rec {
  automation_id: string;
  contact_id: string;
  status: RunStatus;
  started_at: string | null;
  completed_at: string | null;
  /** The event that started the run; its payload is `event.*` to the steps. */
  trigger: { event: string; payload: Record<string, unknown> };
  /** Payloads of events waited for and received: `wait_events.<name>.*` to the steps. */
  received: Record<string, Record<string, unknown>>;
  /** The step to execute next, or the one being waited on; null once done. */
  at: string | null;
  state: RunState;
  /** How the waited-on step ended, once it has: the connection to follow. */
  resume: 'event_received' | 'timeout' | null;
  /** Its time in the due index (ms), or null when nothing is due (paused, done). */
  due: number | null;
  /** While `waiting`: the event name (the run is indexed by contact and event). */
  waiting_for: string | null;
  /** While `paused`: the state it left, which it takes again (due at once) when the automation is enabled again. */
  paused_from?: RunState;
  /** Failed attempts of the current step (transient errors), reset when it completes. */
  attempts: number;
  /** Bumped by every change: an advance computed on an older revision is dropped. */
  rev: number;
  /** Step history, oldest first (the last MAX_RUN_HISTORY kept). */
  steps: RunStepRec[];
  /** History entries dropped from the front. */
  steps_dropped?: number;
}

/** The most step history entries a run keeps (a loop with waits can run for ever). */
export const MAX_RUN_HISTORY = 100;

/**
 * A trigger the ways in committed (an event sent, a contact created or added to a segment):
 * the back office turns it into runs, and wakes runs waiting for it.
 */
export interface TriggerRec extends Rec {
  event: string;
  /** The contact it is about: by id, or by email (a contact created when a run starts). */
  contact_id: string | null;
  email: string | null;
  payload: Record<string, unknown>;
}
