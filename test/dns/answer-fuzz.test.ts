// The answer reader (src/dns/exchange.ts readAnswer, over dns-packet) against mangled
// answers: whatever the bytes, it returns an answer or throws EBADRESP — never anything else, never
// a hang. Seeded, so a failure repeats; POSTHORN_FUZZ_RUNS raises the count for a longer run.
import { describe, test, expect } from 'bun:test';
import packet from 'dns-packet';
import { readAnswer } from '../../src/dns/resolver';
import { rng, fuzzRuns, FUZZ_TIMEOUT, flipBytes, truncate, randomBytes, chance } from '../helpers/fuzz';

const RUNS = fuzzRuns(3000);

const query = packet.encode({
  type: 'query',
  id: 4242,
  flags: packet.RECURSION_DESIRED,
  questions: [{ type: 'TXT', class: 'IN', name: 'sel._domainkey.example.test' }],
});
const good = packet.encode({
  type: 'response',
  id: 4242,
  flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE,
  questions: [{ type: 'TXT', class: 'IN', name: 'SEL._domainkey.example.test' }],
  answers: [
    { type: 'TXT', class: 'IN', name: 'sel._domainkey.example.test', ttl: 60, data: ['v=DKIM1; k=rsa; p=MIIB', 'IjANBgkqhkiG9w0B'] },
    { type: 'TXT', class: 'IN', name: 'sel._domainkey.example.test', ttl: 60, data: ['v=spf1 -all'] },
  ],
});

function outcome(buf: Buffer): 'ok' | 'EBADRESP' {
  try {
    const a = readAnswer(buf, query);
    expect(Array.isArray(a.answers)).toBe(true);
    return 'ok';
  } catch (e) {
    expect((e as NodeJS.ErrnoException).code).toBe('EBADRESP');
    return 'EBADRESP';
  }
}

describe('answers', () => {
  test('a well-formed answer keeps each record and its strings; the question compares case-insensitively', () => {
    const a = readAnswer(good, query);
    expect({ rcode: a.rcode, truncated: a.truncated }).toEqual({ rcode: 'NOERROR', truncated: false });
    expect(a.answers.map((r) => (r.data as Buffer[]).map(String))).toEqual([['v=DKIM1; k=rsa; p=MIIB', 'IjANBgkqhkiG9w0B'], ['v=spf1 -all']]);
  });

  test('another id, a query instead of a response, or another question → EBADRESP', () => {
    const other = (p: Partial<packet.Packet>) =>
      packet.encode({ type: 'response', id: 4242, questions: [{ type: 'TXT', class: 'IN', name: 'sel._domainkey.example.test' }], ...p });
    for (const buf of [
      other({ id: 4243 }),
      other({ type: 'query' }),
      other({ questions: [{ type: 'TXT', class: 'IN', name: 'evil.test' }] }),
      other({ questions: [{ type: 'A', class: 'IN', name: 'sel._domainkey.example.test' }] }),
    ])
      expect(outcome(buf)).toBe('EBADRESP');
  });

  test(
    `${RUNS} mangled answers: a result or EBADRESP, never another error`,
    () => {
      const random = rng(20261124);
      const seen = { ok: 0, EBADRESP: 0 };
      for (let i = 0; i < RUNS; i++) {
        const buf = Buffer.from(good);
        const mode = i % 3;
        if (mode === 0) flipBytes(random, buf);
        const cut = mode === 1 ? truncate(random, buf) : buf;
        const noise = mode === 2 ? Buffer.concat([cut.subarray(0, 12), randomBytes(random, 64)]) : cut;
        // Keep the id most of the time, so mangling reaches past the header.
        if (noise.length >= 2 && chance(random, 0.9)) noise.writeUInt16BE(4242, 0);
        seen[outcome(noise)]++;
      }
      // Both outcomes occur: the mangling reached the decoder, and some inputs still decoded.
      expect(seen.ok).toBeGreaterThan(0);
      expect(seen.EBADRESP).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT,
  );
});
