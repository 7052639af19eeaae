// GET /emails/metrics on the wire (docs/api.md §7.9). The values of the query are checked by
// src/analytics/metrics.ts (dates, zones, the metric and dimension names).
import { Type } from '@sinclair/typebox';
import { AnyRecord, Timestamp, type Static } from './common';

export const MetricsQuery = Type.Object({
  start_date: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time' })),
  end_date: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time' })),
  timezone: Type.Optional(Type.String({ description: 'An IANA time zone' })),
  granularity: Type.Optional(Type.String({ description: 'hourly, daily, weekly or monthly' })),
  metrics: Type.Optional(
    Type.String({
      description:
        'Metric names, comma-separated. Besides the default ones, `bounced_<class>` (recipient, mailbox_full, message, reputation, authentication, policy, rate, routing, unknown: bounces by bounce class, a Posthorn extension) when named',
    }),
  ),
  dimensions: Type.Optional(
    Type.String({
      description:
        'period, domain, email, broadcast, and site (the mailbox provider: a site of delivery shaping or `other`; a Posthorn extension), and ip (the sending IP of `delivery.ips`; a Posthorn extension, refused when none are configured); comma-separated',
    }),
  ),
  domain_id: Type.Optional(Type.String()),
  email_id: Type.Optional(Type.String()),
  broadcast_id: Type.Optional(Type.String()),
});
export type MetricsQuery = Static<typeof MetricsQuery>;

/** A row of a breakdown: its dimensions, then each metric asked for. */
const Row = AnyRecord(Type.Union([Type.String(), Type.Number()]));

export const Metrics = Type.Object({
  object: Type.Literal('metrics'),
  start_date: Timestamp,
  end_date: Timestamp,
  metrics: Type.Array(Type.String()),
  dimensions: Type.Array(Type.String()),
  granularity: Type.String(),
  totals: AnyRecord(Type.Number()),
  /** Only with dimensions. */
  data: Type.Optional(Type.Array(Row)),
});
export type Metrics = Static<typeof Metrics>;
