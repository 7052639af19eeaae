import { describe, expect, test } from 'bun:test';
import { parseIsoInstant, parseNaturalInstant, parseScheduledAt } from '../../src/sending/schedule';
import { ApiError } from '../../src/errors';

const NOW = Date.parse('2025-03-04T09:00:00.000Z'); // a Tuesday

describe('parseIsoInstant', () => {
  test('ISO 8601 date-times with a zone', () => {
    expect(parseIsoInstant('2025-03-04T09:43:52.548Z')).toBe(Date.parse('2025-03-04T09:43:52.548Z'));
    expect(parseIsoInstant('2025-03-04T11:43:52+02:00')).toBe(Date.parse('2025-03-04T09:43:52Z'));
    expect(parseIsoInstant('2025-03-04 04:43-0500')).toBe(Date.parse('2025-03-04T09:43:00Z'));
    expect(parseIsoInstant('2025-03-04T09:43:52.1234567+00')).toBe(Date.parse('2025-03-04T09:43:52.123Z'));
  });

  test.each([
    '2025-03-04',
    '2025-03-04T09:43:52',
    '2025-02-29T09:00:00Z',
    '2025-04-31T09:00:00Z',
    '2025-13-01T09:00:00Z',
    '2025-03-04T24:00:00Z',
    '2025-03-04T09:60:00Z',
    '2025-03-04T09:00:00+25:00',
    'in 1 hour',
    'tomorrow',
    '',
  ])('rejects %p', (text) => {
    expect(parseIsoInstant(text)).toBeNull();
  });
});

describe('parseScheduledAt', () => {
  test('future times normalise to UTC with milliseconds', () => {
    expect(parseScheduledAt('2025-03-05T10:00:00+01:00', 'scheduled_at', NOW)).toBe('2025-03-05T09:00:00.000Z');
  });

  test('a past time means send now', () => {
    expect(parseScheduledAt('2025-03-01T00:00:00Z', 'scheduled_at', NOW)).toBeNull();
  });

  test('at most 30 days ahead', () => {
    expect(parseScheduledAt('2025-04-03T09:00:00Z', 'scheduled_at', NOW)).toBe('2025-04-03T09:00:00.000Z');
    expect(() => parseScheduledAt('2025-04-03T09:00:01Z', 'scheduled_at', NOW)).toThrow(
      'Invalid `scheduled_at` field: it must be at most 30 days in the future.',
    );
  });

  test('bad values name the field', () => {
    expect(() => parseScheduledAt('next week', 'scheduled_at', NOW)).toThrow(/^Invalid `scheduled_at` field: it must be an ISO 8601/);
  });
});

const at = (text: string, now = NOW) => parseScheduledAt(text, 'scheduled_at', now);

describe('natural language', () => {
  test.each([
    ['in 1 min', '2025-03-04T09:01:00.000Z'],
    ['in 5 mins', '2025-03-04T09:05:00.000Z'],
    ['in 1 minute', '2025-03-04T09:01:00.000Z'],
    ['in 90 minutes', '2025-03-04T10:30:00.000Z'],
    ['in 1 hour', '2025-03-04T10:00:00.000Z'],
    ['in 3 hours', '2025-03-04T12:00:00.000Z'],
    ['in an hour', '2025-03-04T10:00:00.000Z'],
    ['in 1 day', '2025-03-05T09:00:00.000Z'],
    ['in 30 days', '2025-04-03T09:00:00.000Z'],
    ['  IN   2   Hours ', '2025-03-04T11:00:00.000Z'],
  ])('%p', (text, iso) => {
    expect(at(text)).toBe(iso);
  });

  test('in 0 minutes is now', () => {
    expect(at('in 0 minutes')).toBeNull();
  });

  test.each([
    ['tomorrow at 9am', '2025-03-05T09:00:00.000Z'],
    ['tomorrow at 9 am', '2025-03-05T09:00:00.000Z'],
    ['tomorrow at 9:30 pm', '2025-03-05T21:30:00.000Z'],
    ['tomorrow at 9:30PM', '2025-03-05T21:30:00.000Z'],
    ['tomorrow at 12am', '2025-03-05T00:00:00.000Z'],
    ['tomorrow at 12pm', '2025-03-05T12:00:00.000Z'],
    ['tomorrow at 15:00', '2025-03-05T15:00:00.000Z'],
    ['tomorrow at 0:05', '2025-03-05T00:05:00.000Z'],
    ['tomorrow at noon', '2025-03-05T12:00:00.000Z'],
    ['tomorrow at midnight', '2025-03-05T00:00:00.000Z'],
    ['Tomorrow at 9AM UTC', '2025-03-05T09:00:00.000Z'],
    ['tomorrow at 9am GMT', '2025-03-05T09:00:00.000Z'],
    ['tomorrow at 9am CET', '2025-03-05T08:00:00.000Z'],
    ['tomorrow at 9am cest', '2025-03-05T07:00:00.000Z'],
    ['tomorrow at 9am BST', '2025-03-05T08:00:00.000Z'],
  ])('%p', (text, iso) => {
    expect(at(text)).toBe(iso);
  });

  test('weekdays: the next such day, today while the time is still ahead', () => {
    expect(at('friday at 3pm')).toBe('2025-03-07T15:00:00.000Z');
    expect(at('Fri at 3pm')).toBe('2025-03-07T15:00:00.000Z');
    expect(at('tuesday at 3pm')).toBe('2025-03-04T15:00:00.000Z');
    expect(at('tuesday at 8am')).toBe('2025-03-11T08:00:00.000Z');
    expect(at('Monday at 9:15')).toBe('2025-03-10T09:15:00.000Z');
    expect(at('wed at 10am')).toBe('2025-03-05T10:00:00.000Z');
    expect(at('thurs at 10am')).toBe('2025-03-06T10:00:00.000Z');
    expect(at('SATURDAY AT 7 P.M.')).toBe('2025-03-08T19:00:00.000Z');
    expect(at('sun at 1am')).toBe('2025-03-09T01:00:00.000Z');
  });

  test('fixed US offsets', () => {
    expect(at('friday at 3pm EST')).toBe('2025-03-07T20:00:00.000Z');
    expect(at('friday at 3pm EDT')).toBe('2025-03-07T19:00:00.000Z');
    expect(at('friday at 3pm CST')).toBe('2025-03-07T21:00:00.000Z');
    expect(at('friday at 3pm CDT')).toBe('2025-03-07T20:00:00.000Z');
    expect(at('friday at 3pm MST')).toBe('2025-03-07T22:00:00.000Z');
    expect(at('friday at 3pm MDT')).toBe('2025-03-07T21:00:00.000Z');
    expect(at('friday at 3pm PST')).toBe('2025-03-07T23:00:00.000Z');
    expect(at('friday at 3pm PDT')).toBe('2025-03-07T22:00:00.000Z');
  });

  test('generic US zones follow daylight saving time for the date named', () => {
    // Winter: standard time.
    expect(at('Friday at 3pm ET')).toBe('2025-03-07T20:00:00.000Z');
    expect(at('friday at 3pm CT')).toBe('2025-03-07T21:00:00.000Z');
    expect(at('friday at 3pm MT')).toBe('2025-03-07T22:00:00.000Z');
    expect(at('friday at 3pm pt')).toBe('2025-03-07T23:00:00.000Z');
    // DST starts on Sunday 9 March 2025: the Monday after is daylight time, though "now" is not.
    expect(at('monday at 3pm ET')).toBe('2025-03-10T19:00:00.000Z');
    expect(at('monday at 3pm PT')).toBe('2025-03-10T22:00:00.000Z');
    // Summer.
    const july = Date.parse('2025-07-01T12:00:00Z');
    expect(at('friday at 3pm ET', july)).toBe('2025-07-04T19:00:00.000Z');
    expect(at('tomorrow at 9am PT', july)).toBe('2025-07-02T16:00:00.000Z');
    // DST ends on Sunday 2 November 2025.
    const nov = Date.parse('2025-10-31T12:00:00Z');
    expect(at('sunday at 9am ET', nov)).toBe('2025-11-02T14:00:00.000Z');
    expect(at('saturday at 9am ET', nov)).toBe('2025-11-01T13:00:00.000Z');
  });

  test('times around a DST change', () => {
    const sat = Date.parse('2025-03-08T12:00:00Z');
    expect(at('tomorrow at 1am ET', sat)).toBe('2025-03-09T06:00:00.000Z');
    expect(at('tomorrow at 3am ET', sat)).toBe('2025-03-09T07:00:00.000Z');
    // 2:30 does not exist that night: read as 3:30 daylight time.
    expect(at('tomorrow at 2:30am ET', sat)).toBe('2025-03-09T07:30:00.000Z');
    // 1:30 happens twice on 2 November: the first one.
    expect(at('tomorrow at 1:30am ET', Date.parse('2025-11-01T12:00:00Z'))).toBe('2025-11-02T05:30:00.000Z');
  });

  test('"tomorrow" and weekdays count in the zone named', () => {
    // 03:00 UTC on Tuesday is still Monday evening in New York.
    const late = Date.parse('2025-03-04T03:00:00Z');
    expect(at('tomorrow at 9am ET', late)).toBe('2025-03-04T14:00:00.000Z');
    expect(at('tomorrow at 9am', late)).toBe('2025-03-05T09:00:00.000Z');
    expect(at('monday at 11pm ET', late)).toBe('2025-03-04T04:00:00.000Z');
  });

  test('at most 30 days ahead', () => {
    expect(() => at('in 31 days')).toThrow('Invalid `scheduled_at` field: it must be at most 30 days in the future.');
    expect(() => at('in 721 hours')).toThrow('at most 30 days');
    expect(() => at('in 99999999999999999999 minutes')).toThrow('at most 30 days');
  });

  test.each([
    'in 1 week',
    'in -1 hour',
    'in 1.5 hours',
    'in hour',
    'in 1hour',
    'tomorrow',
    'tomorrow 9am',
    'tomorrow at',
    'tomorrow at 13pm',
    'tomorrow at 0am',
    'tomorrow at 24:00',
    'tomorrow at 9:60',
    'tomorrow at 9am XYZ',
    'tomorrow at 9am America/New_York',
    'yesterday at 9am',
    'friday',
    'fryday at 3pm',
    'next friday at 3pm',
    'constructor at 9am',
    'in 1 constructor',
    'tomorrow at 9am constructor',
  ])('rejects %p', (text) => {
    expect(parseNaturalInstant(text, NOW)).toBeNull();
    let err: unknown;
    try {
      at(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toJSON()).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((err as ApiError).message).toStartWith('Invalid `scheduled_at` field:');
  });
});
