// Record shapes of webhooks (docs/api.md §14): the endpoints, one event record per webhook and
// event (its delivery state, in the outbox while an attempt is due) and the attempt log.
import type { Rec } from './interface';

export type WebhookStatus = 'enabled' | 'disabled';

export interface WebhookRec extends Rec {
  endpoint: string;
  /** Subscribed Resend event kinds (§14.2). */
  events: string[];
  status: WebhookStatus;
  /** `whsec_…`; signs every delivery. */
  signing_secret: string;
  /** The secret before the last rotation: it signs too until `previous_secret_expires_at` (§14.5). */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  /**
   * Posthorn: only the events of these domains of the team (email and domain events; the others
   * have none), absent or empty for all (docs/api.md §14.1).
   */
  domain_ids?: string[];
  /** Posthorn: `email.received` carries the message — text, html, headers, attachment links (docs/api.md §14.3). */
  include_content?: boolean;
}

export type WebhookEventStatus = 'pending' | 'attempting' | 'success' | 'failed';

/** The envelope POSTed to the endpoint (§14.3). */
export interface WebhookPayload {
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/**
 * One event for one webhook; `id` is its `msg_…` id (the `svix-id` of every attempt). Invariant:
 * `due` is set exactly while the event is in the outbox (store/outbox.ts) at that time.
 */
export interface WebhookEventRec extends Rec {
  webhook_id: string;
  /** The event log entry (EventRec) it was made from. */
  event_id: string;
  type: string;
  status: WebhookEventStatus;
  /** Attempts started so far (a manual replay counts too). */
  attempts: number;
  /** When the next attempt is due (ms), null when none is scheduled. */
  due: number | null;
  /** A manual replay in progress: one attempt, no retries after it. */
  replay: boolean;
  payload: WebhookPayload;
}

/** One delivery attempt; `created_at` is when it was sent. */
export interface WebhookAttemptRec extends Rec {
  webhook_id: string;
  /** The webhook event (`msg_…`). */
  event_id: string;
  http_status_code: number | null;
  /** The first 2 KB of the response body, or a short error text (`timeout`, `connection refused`). */
  response: string;
  duration_ms: number;
  /** Why there was no usable answer (network error, refused address), null when one came. */
  error: string | null;
}
