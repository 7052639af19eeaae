// `scheduled_at` of emails and broadcasts (docs/api.md §7.1, §13.2): an ISO 8601 date-time with
// a time zone, or one of the natural-language forms `in <n> <unit>`, `tomorrow at <time> [<zone>]`
// and `<weekday> at <time> [<zone>]` (UTC without a zone); at most 30 days ahead; a time in the
// past means "send now".
import { zoneFormatter } from '../analytics/periods';
import { errors } from '../errors';

export const MAX_SCHEDULE_MS = 30 * 86_400_000;

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/** The instant an ISO 8601 date-time with offset names (ms), or null when it is not one. */
export function parseIsoInstant(text: string): number | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const n = (i: number) => (m[i] === undefined ? 0 : Number(m[i]));
  const [y, mo, d, h, mi, s, offH, offM] = [1, 2, 3, 4, 5, 6, 10, 11].map(n);
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59 || offH > 23 || offM > 59) return null;
  const local = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  // Date.UTC rolls 31 April over into May: such a day does not exist.
  if (new Date(local).getUTCDate() !== d) return null;
  const sign = m[9] === '-' ? -1 : 1;
  return local - sign * (offH * 60 + offM) * 60_000;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const UNITS: Record<string, number> = { min: MINUTE, mins: MINUTE, minute: MINUTE, minutes: MINUTE, hour: HOUR, hours: HOUR, day: DAY, days: DAY };
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY_ABBREVS: Record<string, number> = { sun: 0, mon: 1, tue: 2, tues: 2, wed: 3, thu: 4, thur: 4, thurs: 4, fri: 5, sat: 6 };

/** A zone abbreviation: a fixed offset (minutes east of UTC), or an IANA zone whose offset depends on the date. */
type Zone = number | string;
const ZONES: Record<string, Zone> = {
  utc: 0,
  gmt: 0,
  // Generic US names follow daylight saving time; the S/D forms are fixed offsets.
  et: 'America/New_York',
  est: -300,
  edt: -240,
  ct: 'America/Chicago',
  cst: -360,
  cdt: -300,
  mt: 'America/Denver',
  mst: -420,
  mdt: -360,
  pt: 'America/Los_Angeles',
  pst: -480,
  pdt: -420,
  cet: 60,
  cest: 120,
  bst: 60,
};

const IN = /^in (\d+|an?) ([a-z]+)$/;
const AT = /^([a-z]+) at (.+)$/;
const TRAILING_WORD = / ([a-z]+)$/;
const TIME = /^(\d{1,2})(?::(\d{2}))? ?(?:([ap])\.?m\.?)?$/;

/** Minutes after midnight of `9am`, `9:30 pm`, `15:00`, `noon`, `midnight`; null when malformed. */
function parseTime(text: string): number | null {
  if (text === 'noon') return 12 * 60;
  if (text === 'midnight') return 0;
  const m = TIME.exec(text);
  if (!m) return null;
  let h = Number(m[1]);
  const min = m[2] === undefined ? 0 : Number(m[2]);
  if (min > 59) return null;
  if (m[3]) {
    if (h < 1 || h > 12) return null;
    h = (h % 12) + (m[3] === 'p' ? 12 : 0);
  } else if (h > 23) return null;
  return h * 60 + min;
}

/** Minutes east of UTC that `zone` observes at `instant`. */
function offsetAt(zone: Zone, instant: number): number {
  if (typeof zone === 'number') return zone;
  // The zones named here are IANA names every runtime knows (ZONES): the formatter exists.
  const parts = zoneFormatter(zone)!.formatToParts(instant);
  const n = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return Math.round((wall - Math.floor(instant / 1000) * 1000) / MINUTE);
}

/** The instant at which the wall clock of `zone` shows `wall` (a UTC-based ms value of the local fields). */
function fromWallClock(zone: Zone, wall: number): number {
  // Try the offsets in force a day before and a day after (a zone changes its offset at most once
  // in between). A time that occurs twice (autumn) takes the earlier instant; one skipped by the
  // spring change is read with the earlier offset, i.e. moved forward — as Temporal's "compatible".
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const fits = [before, after].map((o) => wall - o * MINUTE).filter((t, i) => offsetAt(zone, t) === [before, after][i]);
  return fits.length ? Math.min(...fits) : wall - before * MINUTE;
}

/** The instant a natural-language `scheduled_at` names, or null when it is not one of the supported forms. */
export function parseNaturalInstant(text: string, now: number): number | null {
  const input = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const rel = IN.exec(input);
  if (rel) return Object.hasOwn(UNITS, rel[2]) ? now + (/^\d/.test(rel[1]) ? Number(rel[1]) : 1) * UNITS[rel[2]] : null;
  const at = AT.exec(input);
  if (!at) return null;
  const day = at[1];
  let timeText = at[2];
  // A trailing zone abbreviation (`3pm ET`); otherwise UTC. (`9 am` ends in a word that is no zone.)
  let zone: Zone = 0;
  const last = TRAILING_WORD.exec(timeText);
  if (last && Object.hasOwn(ZONES, last[1])) {
    zone = ZONES[last[1]];
    timeText = timeText.slice(0, -last[0].length);
  }
  const minutes = parseTime(timeText);
  if (minutes === null) return null;
  // Today's date as the zone's wall clock shows it.
  const today = new Date(now + offsetAt(zone, now) * MINUTE);
  const midnight = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  const on = (days: number) => fromWallClock(zone, midnight + days * DAY + minutes * MINUTE);
  if (day === 'tomorrow') return on(1);
  const weekday = WEEKDAYS.includes(day) ? WEEKDAYS.indexOf(day) : Object.hasOwn(WEEKDAY_ABBREVS, day) ? WEEKDAY_ABBREVS[day] : -1;
  if (weekday < 0) return null;
  // The soonest such day whose time is still ahead: today if it has not passed yet.
  const days = (weekday - today.getUTCDay() + 7) % 7;
  const instant = on(days);
  return instant > now ? instant : on(days + 7);
}

/**
 * Validate a `scheduled_at` value: the ISO timestamp (UTC, milliseconds) to send at, or null when
 * the time is not in the future (send now). Throws 422 naming `field`.
 */
export function parseScheduledAt(value: string, field = 'scheduled_at', now = Date.now()): string | null {
  const at = parseIsoInstant(value) ?? parseNaturalInstant(value, now);
  if (at === null)
    throw errors.invalidField(
      field,
      'it must be an ISO 8601 date-time with a time zone, such as `2025-03-04T09:43:52.548Z`, or natural language such as `in 1 hour`, `tomorrow at 9am` or `friday at 3pm ET`.',
    );
  if (at - now > MAX_SCHEDULE_MS) throw errors.invalidField(field, 'it must be at most 30 days in the future.');
  return at > now ? new Date(at).toISOString() : null;
}
