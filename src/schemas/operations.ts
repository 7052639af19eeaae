// Posthorn's operating routes on the wire: health (docs/api.md §1.1), the delivery queue and its
// controls (§19.6, §19.7), TLS-RPT data (§19.8), usage (§21), the request logs (§15).
import { Type } from '@sinclair/typebox';
import { ExportQuery, Id, Nullable, PageQuery, Timestamp, type Static } from './common';

/** GET /health: `ok` with the embedded store; in cluster mode also the database and the nodes sharing it. */
export const Health = Type.Union([
  Type.Object({ status: Type.Literal('ok') }),
  Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
    database: Type.Union([Type.Literal('reachable'), Type.Literal('unreachable')]),
    nodes: Type.Integer(),
    /** With regions (README "Regions"): regions whose mail waits because no node of theirs is alive. */
    regions_waiting: Type.Optional(Type.Array(Type.String())),
  }),
]);

/** One destination domain of the team's queue (docs/api.md §19.6). */
export const QueueDestination = Type.Object({
  object: Type.Literal('queue_destination'),
  destination: Type.String(),
  site: Type.String(),
  queued: Type.Integer(),
  recipients: Type.Integer(),
  retrying: Type.Integer(),
  held: Type.Boolean(),
  held_emails: Type.Integer(),
  oldest_queued_at: Nullable(Timestamp),
  next_attempt_at: Nullable(Timestamp),
  last_error: Nullable(Type.String()),
  suspended_until: Nullable(Timestamp),
});
export type QueueDestination = Static<typeof QueueDestination>;

export const QueueList = Type.Object({
  object: Type.Literal('list'),
  has_more: Type.Literal(false),
  data: Type.Array(QueueDestination),
  truncated: Type.Boolean(),
});

/** A control's answer: the destination after it, and how many queue entries it changed. */
export const QueueControlResult = Type.Composite([QueueDestination, Type.Object({ affected: Type.Integer() })]);

export const DestinationParams = Type.Object({ destination: Type.String({ description: 'A domain name' }) });

/** One day of one MTA-STS policy domain, shaped as RFC 8460 §4.4 shapes a policy's results. */
export const TlsReport = Type.Object({
  object: Type.Literal('tls_report'),
  id: Type.String({ description: '`<date>/<policy domain>`' }),
  date: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
  policy_domain: Type.String(),
  policy: Type.Object({
    'policy-type': Type.String(),
    'policy-string': Type.Array(Type.String()),
    'policy-domain': Type.String(),
    'mx-host': Type.Array(Type.String()),
  }),
  summary: Type.Object({ 'total-successful-session-count': Type.Integer(), 'total-failure-session-count': Type.Integer() }),
  'failure-details': Type.Array(
    Type.Object({
      'result-type': Type.String(),
      'receiving-mx-hostname': Type.Optional(Type.String()),
      'receiving-ip': Type.Optional(Type.String()),
      'failed-session-count': Type.Integer(),
      'failure-reason-code': Type.Optional(Type.String()),
    }),
  ),
});
export type TlsReport = Static<typeof TlsReport>;
export const TlsReportList = Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(TlsReport) });
export const TlsReportQuery = Type.Object({
  limit: Type.Optional(Type.String()),
  after: Type.Optional(Type.String({ description: "An item's `id`" })),
  before: Type.Optional(Type.String({ description: 'Refused: this list pages forward only' })),
  since: Type.Optional(Type.String({ description: 'YYYY-MM-DD, inclusive' })),
  until: Type.Optional(Type.String({ description: 'YYYY-MM-DD, inclusive' })),
});

const Period = Type.Object({ used: Type.Integer(), limit: Nullable(Type.Integer()), sent: Type.Integer(), received: Type.Integer(), resets_at: Timestamp });
const Count = Type.Object({ used: Type.Integer(), limit: Type.Null() });

/** GET /usage (docs/api.md §21). */
export const Usage = Type.Object({
  object: Type.Literal('usage'),
  generated_at: Timestamp,
  emails: Type.Object({ daily: Period, monthly: Period }),
  contacts: Count,
  segments: Count,
  broadcasts: Count,
  ai_credits: Type.Object({ used: Type.Integer(), limit: Type.Null(), next_increase_at: Type.Null() }),
  automation_runs: Type.Object({ used: Type.Integer(), limit: Type.Null(), resets_at: Timestamp }),
  domains: Count,
  rate_limit: Type.Object({ limit: Type.Number(), duration: Type.String() }),
});
export type Usage = Static<typeof Usage>;

/** An API request as the log keeps it (docs/api.md §15). */
export const LogSummary = Type.Object({
  id: Id,
  created_at: Timestamp,
  endpoint: Type.String(),
  method: Type.String(),
  response_status: Type.Integer(),
  user_agent: Nullable(Type.String()),
  /** Posthorn: which key made the request. */
  api_key_id: Nullable(Id),
});
export type LogSummary = Static<typeof LogSummary>;

export const Log = Type.Composite([
  Type.Object({ object: Type.Literal('log') }),
  LogSummary,
  Type.Object({ duration_ms: Type.Number(), request_body: Type.Unknown(), response_body: Type.Unknown() }),
]);

/** Posthorn's filters of the request log (docs/api.md §15): the list's and the export's. */
const LogFilters = Type.Object({
  method: Type.Optional(Type.String({ description: 'Posthorn: an HTTP method' })),
  status: Type.Optional(Type.String({ description: 'Posthorn: a status code such as 422, or a class such as 4xx' })),
  api_key_id: Type.Optional(Type.String({ description: 'Posthorn: the key that made the requests' })),
});

export const LogQuery = Type.Composite([PageQuery, LogFilters]);

/** GET /logs/export (docs/api.md §4.1). */
export const LogExportQuery = Type.Composite([LogFilters, ExportQuery]);
