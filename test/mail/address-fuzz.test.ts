// Address parsing (src/mail/address.ts parseEmail, parseAddress, asciiDomain; the API's fields
// through src/sending/address.ts) against generated and mangled addresses: quotes, comments, IDN,
// CR/LF and NUL, long local parts and labels, many @. Whatever the text, the answer is null (or
// the documented 422) or a well-formed Address that formats back to itself — never a line break
// that would start a header of the sender's choosing, never an exception. Seeded, so a failure
// repeats; POSTHORN_FUZZ_RUNS raises the count for a longer run.
import { describe, test, expect } from 'bun:test';
import { parseAddress, parseEmail, formatAddress, asciiDomain, type Address } from '../../src/mail/address';
import { addressField, invalidAddressMessage } from '../../src/sending/address';
import { ApiError } from '../../src/errors';
import { rng, fuzzRuns, FUZZ_TIMEOUT, int, chance, pick, mutateText, randomText, type Random } from '../helpers/fuzz';

const RUNS = fuzzRuns(6000);

const SEEDS = [
  'ann@example.test',
  'a.b+tag@Mail.Example.TEST',
  "o'brien_{x}@sub-1.example.test",
  'Acme <news@acme.test>',
  '"Acme, Inc." <news@acme.test>',
  '"Say \\"hi\\" <now>" <a@acme.test>',
  'Ann Example (Sales) <ann@acme.test>',
  'Zoë Ä <z@acme.test>',
  '<news@acme.test>',
  'info@Bücher.test',
  'x@xn--bcher-kva.test',
  '"" <a@acme.test>',
];

const ATOM = [..."abcxyzABZ0189!#$%&'*+/=?^_`{|}~-"];
const LABEL = [...'abcz019-', 'ü', 'é', 'ß', '中', 'ｅ', 'İ', '\u200d'];
const NAME = [...'Ann Acme,.;:@()<>[]"\\\'', 'ë', '中', '💌', '\t', '\0', '\r', '\n', '\u0085', '\u2028', ' ', '  '];

/** A local part: mostly dot-atoms, sometimes quoted or with stray dots, sometimes over 64 characters. */
function localPart(random: Random): string {
  const atoms = Array.from({ length: 1 + int(random, 3) }, () => randomText(random, chance(random, 0.05) ? 80 : 10, ATOM) || 'a');
  const local = atoms.join(pick(random, ['.', '.', '.', '..', '']));
  return chance(random, 0.1) ? `"${local}"` : chance(random, 0.05) ? `.${local}` : local;
}

/** A domain: 1–4 labels, some internationalised, some too long, an occasional numeric TLD or trailing dot. */
function domain(random: Random): string {
  const labels = Array.from({ length: 1 + int(random, 4) }, () => randomText(random, chance(random, 0.05) ? 80 : 12, LABEL) || 'x');
  if (chance(random, 0.7)) labels.push(pick(random, ['test', 'TEST', 'example', 'xn--bcher-kva', '123', 'tëst']));
  return labels.join('.') + (chance(random, 0.05) ? '.' : '');
}

/** A display name: plain or quoted (escapes and all), with specials, controls and non-ASCII. */
function displayName(random: Random): string {
  const name = randomText(random, 16, NAME);
  if (!chance(random, 0.5)) return name;
  return `"${name.replace(/(["\\])/g, (c) => (chance(random, 0.9) ? `\\${c}` : c))}"`;
}

function address(random: Random): string {
  const email = `${localPart(random)}${chance(random, 0.05) ? '@'.repeat(2 + int(random, 3)) : '@'}${domain(random)}`;
  switch (int(random, 5)) {
    case 0:
      return email;
    case 1:
      return `${displayName(random)} <${email}>`;
    case 2:
      return `${displayName(random)}<${email}>${chance(random, 0.2) ? ' (comment)' : ''}`;
    case 3:
      return mutateText(random, pick(random, SEEDS), ['@', '<', '>', '"', '\\"', '(c)', '\r\nBcc: x@evil.test', '\0']);
    default:
      return mutateText(random, email, ['@', '@@', '\r\n', '\n', '\0', 'ü', '.']);
  }
}

/** A parsed Address is well-formed and reads back from its text form; null passes. */
function wellFormed(a: Address | null, what: string): 'address' | 'null' {
  if (a === null) return 'null';
  expect(a.name === null || (typeof a.name === 'string' && a.name.length > 0)).toBe(true);
  // No CR or LF anywhere: a line break would start a header of the sender's choosing.
  expect(`${a.name ?? ''}${a.address}`).not.toMatch(/[\r\n]/);
  // The address itself: printable ASCII without spaces, a lowercase ASCII domain in canonical form.
  expect(a.address).toMatch(/^[!-~]+$/);
  expect(a.address.endsWith(`@${a.domain}`)).toBe(true);
  expect(a.address.slice(0, -a.domain.length - 1).length).toBeLessThanOrEqual(64);
  expect(asciiDomain(a.domain)).toBe(a.domain);
  const text = formatAddress(a);
  expect(text).not.toMatch(/[\r\n]/);
  if (JSON.stringify(parseAddress(text)) !== JSON.stringify(a))
    throw new Error(`${what}: ${JSON.stringify(a)} formats as ${JSON.stringify(text)}, which does not read back`);
  expect(parseEmail(a.address)).toEqual({ name: null, address: a.address, domain: a.domain });
  return 'address';
}

describe('address parsing', () => {
  test(
    `${RUNS} generated and mangled addresses: null or a well-formed Address that round-trips, never an exception`,
    () => {
      const random = rng(20261201);
      const seen = { address: 0, null: 0, named: 0 };
      for (let i = 0; i < RUNS; i++) {
        const text = address(random);
        const a = parseAddress(text);
        seen[wellFormed(a, JSON.stringify(text))]++;
        if (a?.name) seen.named++;
        wellFormed(parseEmail(text), JSON.stringify(text));
        // The API field: the Address, or Resend's 422 naming the field.
        try {
          expect(addressField('to', text)).toEqual(a!);
        } catch (e) {
          expect(a).toBeNull();
          expect(e).toBeInstanceOf(ApiError);
          expect((e as ApiError).toJSON()).toEqual({ statusCode: 422, name: 'validation_error', message: invalidAddressMessage('to') });
        }
      }
      // Both outcomes occur, named addresses among the accepted ones.
      expect(seen.address).toBeGreaterThan(RUNS / 20);
      expect(seen.null).toBeGreaterThan(RUNS / 20);
      expect(seen.named).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT,
  );

  test(
    `${RUNS} domains: null or a canonical lowercase ASCII name`,
    () => {
      const random = rng(20261202);
      const seen = { ok: 0, null: 0 };
      for (let i = 0; i < RUNS; i++) {
        const name = chance(random, 0.3) ? mutateText(random, domain(random)) : domain(random);
        const ascii = asciiDomain(name);
        if (ascii === null) {
          seen.null++;
          continue;
        }
        seen.ok++;
        expect(ascii).toMatch(/^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/);
        expect(ascii.length).toBeLessThanOrEqual(253);
        expect(asciiDomain(ascii)).toBe(ascii);
      }
      expect(seen.ok).toBeGreaterThan(0);
      expect(seen.null).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT,
  );
});
