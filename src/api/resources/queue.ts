// GET /queue (docs/api.md §19.6): the team's delivery queue by destination domain — what is
// waiting, since when, why, and when it is tried next. Read-only; queue controls come with the
// operations work (hold, release, retry, cancel).
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { uuidTime } from '../../ids';

/** At most this many queue entries are read per request (memory stays bounded on a huge queue). */
const SCAN = 50_000;

export function queueRoutes(app: App, { store }: ApiContext) {
  app.get(
    '/queue',
    async ({ request }) => {
      const { team } = caller(request);
      const all = await store.queue.due(Number.MAX_SAFE_INTEGER, SCAN);
      const now = Date.now();
      const by = new Map<string, { destination: string; queued: number; recipients: number; oldest: number; next: number; last_error: string | null; retrying: number }>();
      for (const { due, entry } of all) {
        if (entry.team_id !== team) continue;
        let d = by.get(entry.domain);
        if (!d) by.set(entry.domain, (d = { destination: entry.domain, queued: 0, recipients: 0, oldest: Infinity, next: Infinity, last_error: null, retrying: 0 }));
        d.queued++;
        d.recipients += entry.recipients.length;
        // Entry ids are UUIDv7: they carry the time the entry was queued.
        d.oldest = Math.min(d.oldest, uuidTime(entry.id));
        d.next = Math.min(d.next, due);
        if (entry.attempts > 0) d.retrying++;
        if (entry.last_error) d.last_error = entry.last_error;
      }
      const data = [...by.values()]
        .sort((a, b) => b.queued - a.queued || a.destination.localeCompare(b.destination))
        .map((d) => ({
          object: 'queue_destination',
          destination: d.destination,
          queued: d.queued,
          recipients: d.recipients,
          retrying: d.retrying,
          oldest_queued_at: new Date(d.oldest).toISOString(),
          next_attempt_at: new Date(Math.max(d.next, now)).toISOString(),
          last_error: d.last_error,
        }));
      return { object: 'list', has_more: false, data, truncated: all.length >= SCAN };
    },
    { detail: { summary: 'The delivery queue by destination domain', tags: ['Queue'] } },
  );
}
