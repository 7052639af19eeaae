// Everything an LMDB store holds, read out item by item in the layouts the files of this folder
// write (see each for its keys), for `posthorn db copy` (../copy.ts): records without their TTL
// bookkeeping, bodies with their spilled files read back, queue and outbox entries, due indexes,
// the inbound spool with its bytes, the incoming queue, counters, memberships and choices. Reads only: the store may
// not be written meanwhile (the copy runs with the service stopped).
import type { Key } from './env';
import type { LmdbStore } from '.';
import type { Rec, IdempotencyRecord, Counters } from '../interface';
import type { IncomingRec, QueueEntry } from '../email-records';
import type { SpooledMessage } from '../inbound-records';
import type { TriggerRec } from '../automation-records';
import type { Subscription } from '../audience-records';
import type { QueueHold, SiteState, MtaStsPolicy, TlsReportDay } from '../delivery-records';
import { CONTENTS, DUE_INDEXES } from '../collections';
import { restoredAt } from './collection';

export type DumpItem =
  | { kind: 'record'; table: string; rec: Rec }
  | { kind: 'content'; repo: keyof typeof CONTENTS; team: string; id: string }
  | { kind: 'queue'; due: number; entry: QueueEntry }
  | { kind: 'outbox'; team: string; webhook: string; due: number; id: string }
  | { kind: 'due'; name: string; due: number; team: string; id: string }
  | { kind: 'spool'; msg: SpooledMessage; due: number | null }
  | { kind: 'incoming'; rec: IncomingRec }
  | { kind: 'trigger'; rec: TriggerRec }
  | { kind: 'progress'; team: string; broadcast: string; contact: string; email: string | null }
  | { kind: 'membership'; team: string; segment: string; contact: string; at: string }
  | { kind: 'choice'; team: string; contact: string; topic: string; subscription: Subscription }
  | { kind: 'idempotency'; team: string; endpoint: string; key: string; rec: IdempotencyRecord }
  | { kind: 'metric'; team: string; hour: number; domain_id: string; broadcast_id: string | null; site: string | null; ip: string | null; counts: Counters }
  | {
      kind: 'emailMetric';
      team: string;
      hour: number;
      email_id: string;
      domain_id: string;
      broadcast_id: string | null;
      site?: string | null;
      ip?: string | null;
      counts: Counters;
    }
  | { kind: 'link'; team: string; broadcast_id: string; url: string; clicks: number; unique_clicks: number }
  | { kind: 'hold'; hold: QueueHold }
  | { kind: 'site'; state: SiteState }
  | { kind: 'mtaSts'; policy: MtaStsPolicy }
  | { kind: 'tlsReport'; report: TlsReportDay }
  | { kind: 'sendCount'; team: string; period: 'h' | 'd'; start: number; n: number };

/** Every item of `store`; `tables`: the collections to read (their database names). */
export function* dump(store: LmdbStore, tables: string[]): Iterable<DumpItem> {
  const db = (name: string) => store.env.db(name);
  for (const table of tables) for (const { key, value } of db(table).getRange({})) yield { kind: 'record', table, rec: restoredAt<Rec>(key, value) };
  for (const [repo, { table }] of Object.entries(CONTENTS) as [keyof typeof CONTENTS, { table: string }][])
    for (const key of db(table).getKeys({})) {
      const [team, id] = key as string[];
      yield { kind: 'content', repo, team: team!, id: id! };
    }
  for (const { key, value } of db('queue').getRange({})) yield { kind: 'queue', due: (key as Key[])[0] as number, entry: value as QueueEntry };
  for (const key of db('webhook_outbox').getKeys({})) {
    const [team, webhook, due, id] = key as [string, string, number, string];
    yield { kind: 'outbox', team, webhook, due, id };
  }
  for (const { name } of Object.values(DUE_INDEXES))
    for (const key of db(name).getKeys({})) {
      const [due, team, id] = key as [number, string, string];
      yield { kind: 'due', name, due, team, id };
    }
  for (const { value } of db('inbound_spool').getRange({})) {
    const { due, expires: _expires, ...msg } = value as SpooledMessage & { due: number | null; expires?: number };
    yield { kind: 'spool', msg, due };
  }
  for (const { value } of db('incoming').getRange({})) yield { kind: 'incoming', rec: value as IncomingRec };
  for (const { value } of db('automation_triggers').getRange({})) yield { kind: 'trigger', rec: value as TriggerRec };
  for (const { key, value } of db('broadcast_progress').getRange({})) {
    const [team, broadcast, contact] = key as string[];
    yield { kind: 'progress', team: team!, broadcast: broadcast!, contact: contact!, email: value as string | null };
  }
  for (const { key, value } of db('members.by_segment').getRange({})) {
    const [team, segment, contact] = key as string[];
    yield { kind: 'membership', team: team!, segment: segment!, contact: contact!, at: String(value) };
  }
  for (const { key, value } of db('topic_choices.by_contact').getRange({})) {
    const [team, contact, topic] = key as string[];
    yield { kind: 'choice', team: team!, contact: contact!, topic: topic!, subscription: value as Subscription };
  }
  for (const { key, value } of db('idempotency').getRange({})) {
    const [team, endpoint, k] = key as string[];
    yield { kind: 'idempotency', team: team!, endpoint: endpoint!, key: k!, rec: value as IdempotencyRecord };
  }
  for (const { key, value } of db('metrics').getRange({})) {
    const [team, hour, domain_id, broadcast, site, ip] = key as [string, number, string, string, string | undefined, string | undefined];
    yield { kind: 'metric', team, hour, domain_id, broadcast_id: broadcast || null, site: site || null, ip: ip || null, counts: value as Counters };
  }
  for (const { key, value } of db('metrics_email').getRange({})) {
    const [team, hour, email_id] = key as [string, number, string];
    const v = value as { domain_id: string; broadcast_id: string | null; site?: string | null; ip?: string | null; counts: Counters };
    yield { kind: 'emailMetric', team, hour, email_id, ...v };
  }
  for (const { key, value } of db('metrics_links').getRange({})) {
    const [team, broadcast_id] = key as string[];
    const v = value as { url: string; clicks: number; unique_clicks: number };
    yield { kind: 'link', team: team!, broadcast_id: broadcast_id!, ...v };
  }
  for (const { value } of db('queue_holds').getRange({})) yield { kind: 'hold', hold: value as QueueHold };
  for (const { value } of db('sites').getRange({})) yield { kind: 'site', state: value as SiteState };
  for (const { value } of db('mta_sts').getRange({})) yield { kind: 'mtaSts', policy: value as MtaStsPolicy };
  for (const { value } of db('tls_reports').getRange({})) yield { kind: 'tlsReport', report: value as TlsReportDay };
  for (const { key, value } of db('send_counts').getRange({})) {
    const [team, period, start] = key as [string, 'h' | 'd', number];
    yield { kind: 'sendCount', team, period, start, n: value as number };
  }
}
