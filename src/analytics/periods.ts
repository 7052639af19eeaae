// Calendar periods in an IANA time zone (docs/api.md §7.9): the start of the hour, day,
// ISO week (Monday) or month an instant falls in, as a UTC instant. Counters are kept per UTC
// hour; a period gathers the hours that start inside it (in zones whose offset is not a whole
// number of hours, an hour counts in the period its start falls in).
export type Granularity = 'hourly' | 'daily' | 'weekly' | 'monthly';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** A formatter for `tz`, or null when the zone is unknown. */
export function zoneFormatter(tz: string): Intl.DateTimeFormat | null {
  let f = formatters.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      return null;
    }
    formatters.set(tz, f);
  }
  return f;
}

interface Local {
  y: number;
  m: number;
  d: number;
  h: number;
  min: number;
  s: number;
}

function localParts(f: Intl.DateTimeFormat, at: number): Local {
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return { y: p.year, m: p.month, d: p.day, h: p.hour, min: p.minute, s: p.second };
}

/** The zone's offset from UTC at `at`, ms. */
function offsetAt(f: Intl.DateTimeFormat, at: number): number {
  const l = localParts(f, at);
  return Date.UTC(l.y, l.m - 1, l.d, l.h, l.min, l.s) - Math.floor(at / 1000) * 1000;
}

/** The UTC instant of a local wall-clock time (the later offset wins across a DST change). */
export function zonedToUtc(f: Intl.DateTimeFormat, y: number, m: number, d: number, h = 0): number {
  const wall = Date.UTC(y, m - 1, d, h);
  let at = wall - offsetAt(f, wall);
  at = wall - offsetAt(f, at);
  return at;
}

/** Start (UTC ms) of the period `at` falls in. */
export function periodStart(f: Intl.DateTimeFormat, g: Granularity, at: number): number {
  const l = localParts(f, at);
  switch (g) {
    case 'hourly':
      return zonedToUtc(f, l.y, l.m, l.d, l.h);
    case 'daily':
      return zonedToUtc(f, l.y, l.m, l.d);
    case 'weekly': {
      const weekday = new Date(Date.UTC(l.y, l.m - 1, l.d)).getUTCDay();
      const monday = new Date(Date.UTC(l.y, l.m - 1, l.d) - ((weekday + 6) % 7) * DAY);
      return zonedToUtc(f, monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate());
    }
    case 'monthly':
      return zonedToUtc(f, l.y, l.m, 1);
  }
}

/** The local date `days` before the day of `at`, at midnight, as a UTC instant. */
export function dayStartBefore(f: Intl.DateTimeFormat, at: number, days: number): number {
  const l = localParts(f, at);
  const day = new Date(Date.UTC(l.y, l.m - 1, l.d) - days * DAY);
  return zonedToUtc(f, day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate());
}

export { HOUR, DAY };
