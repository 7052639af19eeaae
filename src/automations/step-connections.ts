// Which ways a run may leave each automation step type (docs/api.md §24): vocabulary the
// definition's checks (definition.ts) and the dashboard's builder (its node handles) share.
// Imports only types, so the dashboard can import it as a value.
import type { AutomationStepType, ConnectionType } from '../store';

/** The connections each step type may start: which way a run leaves it. */
export const OUTGOING: Readonly<Record<AutomationStepType, readonly ConnectionType[]>> = {
  trigger: ['default'],
  delay: ['default'],
  send_email: ['default'],
  wait_for_event: ['event_received', 'timeout', 'default'],
  condition: ['condition_met', 'condition_not_met'],
  contact_update: ['default'],
  contact_delete: [],
  add_to_segment: ['default'],
  remove_from_segment: ['default'],
};
