import { describe, expect, test } from 'bun:test';
import { bounceTypeOf } from '../../src/analytics/broadcasts';
import { EVENT_KINDS } from '../../src/event-catalogue';
import { countersFor } from '../../src/events/counting';
import type { EmailRec } from '../../src/store';

const bounced = EVENT_KINDS['email.bounced'].count;
const email = (counted: string[] = []) => ({ counted }) as unknown as EmailRec;

describe('countersFor: a bounce counts once per email, by its type', () => {
  test.each([
    ['Permanent', 'bounced_permanent', 'permanent'],
    ['Transient', 'bounced_transient', 'transient'],
    ['Undetermined', 'bounced_undetermined', 'undetermined'],
  ] as const)('%s', (type, counter, listed) => {
    const first = countersFor(email(['sent']), bounced, { bounce: { type, subType: 'General', message: '550' } });
    expect(first.counts).toEqual({ bounced: 1, [counter]: 1, bounced_unknown: 1 });
    expect(first.counted).toEqual(['sent', 'bounced', counter]);
    // The broadcast's recipients list reads the type from what was counted.
    expect(bounceTypeOf(email(first.counted))).toBe(listed);
    // A second bounce of the same email counts nothing.
    expect(countersFor(email(first.counted), bounced, { bounce: { type: 'Permanent', subType: 'General', message: '550' } }).counts).toEqual({});
  });

  test('a bounce without a recorded type counts as undetermined (and, without a class, as unknown)', () => {
    expect(countersFor(email(), bounced, {}).counts).toEqual({ bounced: 1, bounced_undetermined: 1, bounced_unknown: 1 });
  });
});
