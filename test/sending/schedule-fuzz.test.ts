// `scheduled_at` (src/sending/schedule.ts parseScheduledAt, parseIsoInstant, parseNaturalInstant;
// docs/api.md §7.1) against random and mangled text at random moments: whatever the text, the
// answer is an ISO instant inside the 30-day window, null (a past time: send now), or the
// documented 422 naming the field — never another exception, never an Invalid Date. Properties
// check what the supported forms mean: `in N <unit>`, ISO with any offset, `tomorrow`/weekday at a
// time in a zone. Seeded, so a failure repeats; POSTHORN_FUZZ_RUNS raises the count for a longer run.
import { describe, test, expect } from 'bun:test';
import { parseScheduledAt, parseIsoInstant, parseNaturalInstant, MAX_SCHEDULE_MS } from '../../src/sending/schedule';
import { ApiError } from '../../src/errors';
import { rng, fuzzRuns, FUZZ_TIMEOUT, int, chance, pick, mutateText, randomText, type Random } from '../helpers/fuzz';

const RUNS = fuzzRuns(6000);
const MINUTE = 60_000;
const DAY = 86_400_000;

/** The two documented refusals (docs/api.md §7.1). */
const NOT_A_TIME =
  'Invalid `scheduled_at` field: it must be an ISO 8601 date-time with a time zone, such as `2025-03-04T09:43:52.548Z`, or natural language such as `in 1 hour`, `tomorrow at 9am` or `friday at 3pm ET`.';
const TOO_FAR = 'Invalid `scheduled_at` field: it must be at most 30 days in the future.';

const SEEDS = [
  'in 1 min',
  'in 5 mins',
  'in 90 minutes',
  'in an hour',
  'in a day',
  'in 30 days',
  '  IN   2   Hours ',
  'tomorrow at 9am',
  'tomorrow at 9:30 pm',
  'tomorrow at noon',
  'Tomorrow at 9AM UTC',
  'tomorrow at 2:30am ET',
  'friday at 3pm ET',
  'Mon at midnight',
  'SATURDAY AT 7 P.M.',
  'thurs at 15:00 cest',
  'sun at 1am pt',
  '2025-03-04T09:43:52.548Z',
  '2025-03-05T10:00:00+01:00',
  '2025-03-04 04:43-0500',
  '2025-03-04T09:43:52.1234567+00',
  '2025-12-31T23:59:59-14:00',
  '2026-02-28T00:00:00+0530',
];
const WORDS = [
  'in',
  'at',
  'an',
  'a',
  'min',
  'hours',
  'days',
  'week',
  'tomorrow',
  'friday',
  'tues',
  'noon',
  'midnight',
  'am',
  'p.m.',
  'et',
  'pst',
  'utc',
  'z',
  'T',
  '+',
  '-',
  ':',
  '99999999999999999999',
  '1e3',
  '0x10',
  '٣',
  '０',
];

/** A moment between 2000 and 2100, often near a US or EU daylight-saving change. */
function moment(random: Random): number {
  if (chance(random, 0.3)) {
    const change = pick(random, [
      '2025-03-09T07:00:00Z',
      '2025-11-02T06:00:00Z',
      '2025-03-30T01:00:00Z',
      '2026-10-25T01:00:00Z',
      '2024-02-29T23:59:59Z',
      '2025-12-31T23:30:00Z',
    ]);
    return Date.parse(change) + (int(random, 6 * DAY) - 3 * DAY);
  }
  return Date.parse('2000-01-01T00:00:00Z') + int(random, 100 * 365 * DAY);
}

function text(random: Random): string {
  switch (int(random, 4)) {
    case 0:
      return randomText(random, 40);
    case 1:
      return Array.from({ length: 1 + int(random, 5) }, () => pick(random, WORDS)).join(pick(random, [' ', '  ', '\t', '']));
    default:
      return mutateText(random, pick(random, SEEDS), WORDS);
  }
}

/** The outcome of one value: an instant in the window, send-now, or a documented 422; anything else fails. */
function outcome(value: string, now: number): 'scheduled' | 'now' | 'refused' {
  for (const instant of [parseIsoInstant(value), parseNaturalInstant(value, now)]) if (instant !== null) expect(Number.isNaN(instant)).toBe(false);
  let at: string | null;
  try {
    at = parseScheduledAt(value, 'scheduled_at', now);
  } catch (e) {
    if (!(e instanceof ApiError)) throw new Error(`${JSON.stringify(value)} at ${new Date(now).toISOString()}: ${e}`);
    expect(e.toJSON()).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect([NOT_A_TIME, TOO_FAR]).toContain(e.message);
    return 'refused';
  }
  if (at === null) return 'now';
  expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const ms = Date.parse(at);
  expect(ms).toBeGreaterThan(now);
  expect(ms - now).toBeLessThanOrEqual(MAX_SCHEDULE_MS);
  return 'scheduled';
}

/** The wall clock (weekday, minutes after midnight) that `zone` shows at `instant`. */
function wallClock(instant: number, zone: string): { weekday: string; minutes: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', weekday: 'long', hour: 'numeric', minute: 'numeric' }).formatToParts(
    instant,
  );
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return { weekday: get('weekday').toLowerCase(), minutes: Number(get('hour')) * 60 + Number(get('minute')) };
}

const ZONES: Record<string, string> = {
  '': 'UTC',
  utc: 'UTC',
  gmt: 'UTC',
  et: 'America/New_York',
  pt: 'America/Los_Angeles',
  ct: 'America/Chicago',
  est: 'Etc/GMT+5',
  pdt: 'Etc/GMT+7',
  cet: 'Etc/GMT-1',
  cest: 'Etc/GMT-2',
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

describe('scheduled_at', () => {
  test(
    `${RUNS} random and mangled values at random moments: an instant in the window, now, or the documented 422`,
    () => {
      const random = rng(20261203);
      const seen = { scheduled: 0, now: 0, refused: 0 };
      for (let i = 0; i < RUNS; i++) {
        const now = chance(random, 0.5) ? Date.parse('2025-03-04T09:00:00Z') : moment(random);
        seen[outcome(text(random), now)]++;
      }
      expect(seen.scheduled).toBeGreaterThan(RUNS / 50);
      expect(seen.now).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT,
  );

  test(
    `${RUNS} ISO date-times with random offsets name the instant they write`,
    () => {
      const random = rng(20261204);
      for (let i = 0; i < RUNS; i++) {
        const now = moment(random);
        const instant = now + int(random, 2 * MAX_SCHEDULE_MS) - MAX_SCHEDULE_MS / 2;
        const offset = (int(random, 28 * 4 + 1) - 14 * 4) * 15; // −14:00 … +14:00 in quarter hours
        const local = new Date(instant + offset * MINUTE).toISOString().slice(0, 23);
        const sign = offset < 0 ? '-' : '+';
        const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
        const mm = String(Math.abs(offset) % 60).padStart(2, '0');
        const zone = offset === 0 && chance(random, 0.5) ? pick(random, ['Z', 'z']) : `${sign}${hh}${pick(random, [':', ''])}${mm}`;
        const value = `${chance(random, 0.2) ? local.replace('T', ' ') : local}${zone}`;
        expect(parseIsoInstant(value)).toBe(instant);
        const expected = instant <= now ? null : instant - now > MAX_SCHEDULE_MS ? TOO_FAR : new Date(instant).toISOString();
        let got: string | null;
        try {
          got = parseScheduledAt(value, 'scheduled_at', now);
        } catch (e) {
          got = (e as ApiError).message;
        }
        expect(got).toBe(expected);
      }
    },
    FUZZ_TIMEOUT,
  );

  test(
    `${RUNS} "in N <unit>": now plus N units, at most 30 days`,
    () => {
      const random = rng(20261205);
      const UNITS: [string, number][] = [
        ['min', MINUTE],
        ['mins', MINUTE],
        ['minute', MINUTE],
        ['minutes', MINUTE],
        ['hour', 60 * MINUTE],
        ['hours', 60 * MINUTE],
        ['day', DAY],
        ['days', DAY],
      ];
      for (let i = 0; i < RUNS; i++) {
        const now = moment(random);
        const [unit, ms] = pick(random, UNITS);
        const n = chance(random, 0.1) ? int(random, 1e9) : int(random, MAX_SCHEDULE_MS / ms + 2);
        const value = `${pick(random, ['', ' ', '\t'])}in${pick(random, [' ', '  '])}${n}${pick(random, [' ', '\t '])}${chance(random, 0.2) ? unit.toUpperCase() : unit}`;
        const expected = n === 0 ? null : n * ms > MAX_SCHEDULE_MS ? TOO_FAR : new Date(now + n * ms).toISOString();
        let got: string | null;
        try {
          got = parseScheduledAt(value, 'scheduled_at', now);
        } catch (e) {
          got = (e as ApiError).message;
        }
        expect(got).toBe(expected);
      }
    },
    FUZZ_TIMEOUT,
  );

  test(
    `${RUNS} "tomorrow"/weekday at a time in a zone: the next such wall-clock time there`,
    () => {
      const random = rng(20261206);
      for (let i = 0; i < RUNS; i++) {
        const now = moment(random);
        const zoneWord = pick(random, Object.keys(ZONES));
        const zone = ZONES[zoneWord]!;
        const minutes = int(random, 24 * 60);
        const h = Math.floor(minutes / 60);
        const m = minutes % 60;
        const time = chance(random, 0.5)
          ? `${h}:${String(m).padStart(2, '0')}`
          : `${h % 12 || 12}${m ? `:${String(m).padStart(2, '0')}` : ''}${pick(random, ['', ' '])}${h < 12 ? 'am' : 'pm'}`;
        const weekday = chance(random, 0.3) ? null : int(random, 7);
        const value = `${weekday === null ? 'tomorrow' : WEEKDAYS[weekday]} at ${time}${zoneWord ? ` ${chance(random, 0.5) ? zoneWord.toUpperCase() : zoneWord}` : ''}`;
        const instant = parseNaturalInstant(value, now)!;
        expect(Number.isFinite(instant)).toBe(true);
        const shown = wallClock(instant, zone);
        // The time asked for — or, when a spring change skips it that night, an hour later (docs/api.md §7.1).
        expect([minutes, minutes + 60]).toContain(shown.minutes);
        if (shown.minutes !== minutes) expect(wallClock(instant - 60 * MINUTE, zone).minutes).not.toBe(minutes);
        if (weekday === null) {
          // Tomorrow in the zone: between now and two days (and an hour of a clock change) ahead.
          expect(instant - now).toBeGreaterThan(0);
          expect(instant - now).toBeLessThanOrEqual(2 * DAY + 60 * MINUTE);
        } else {
          expect(shown.weekday).toBe(WEEKDAYS[weekday]!);
          expect(instant).toBeGreaterThan(now);
          expect(instant - now).toBeLessThanOrEqual(7 * DAY + 60 * MINUTE);
        }
      }
    },
    FUZZ_TIMEOUT,
  );
});
