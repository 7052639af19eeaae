// Seeded inputs for the fuzz tests (test/**/*-fuzz.test.ts): a small generator, so every run sees
// the same inputs and a failure repeats, and mutations of bytes and text.
//
//   const random = rng(20261124);
//   for (let i = 0; i < fuzzRuns(3000); i++) check(mutateText(random, pick(random, seeds)));
//
// POSTHORN_FUZZ_RUNS=N raises the count of every fuzz loop for a longer run
// (`POSTHORN_FUZZ_RUNS=100000 npm test -- fuzz`); pass FUZZ_TIMEOUT as the test's timeout then.

const ENV_RUNS = Number(process.env.POSTHORN_FUZZ_RUNS) || 0;

/**
 * How many inputs a fuzz loop tries: `runs` by default; with POSTHORN_FUZZ_RUNS=N, N times `share`
 * (loops whose inputs are expensive, such as HTTP requests, take a share of N), never fewer than `runs`.
 */
export function fuzzRuns(runs: number, share = 1): number {
  return ENV_RUNS ? Math.max(runs, Math.round(ENV_RUNS * share)) : runs;
}

/** A per-test timeout for fuzz loops: the suite's default unless a longer run was asked for. */
export const FUZZ_TIMEOUT: number | undefined = ENV_RUNS ? 24 * 3_600_000 : undefined;

/** A number in [0, 1). */
export type Random = () => number;

/** mulberry32: a small seeded generator, so every run sees the same inputs. */
export function rng(seed: number): Random {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n). */
export const int = (random: Random, n: number) => Math.floor(random() * n);
export const chance = (random: Random, p: number) => random() < p;
export const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)]!;

/** Up to `max` - 1 random bytes. */
export const randomBytes = (random: Random, max: number) => Buffer.from(Array.from({ length: int(random, max) }, () => int(random, 256)));

/** 1 to `max` bytes of `buf` overwritten in place with random values; returns `buf`. */
export function flipBytes(random: Random, buf: Buffer, max = 6): Buffer {
  for (let n = 1 + int(random, max); n > 0; n--) buf[int(random, buf.length)] = int(random, 256);
  return buf;
}

/** A random-length prefix of `buf`. */
export const truncate = (random: Random, buf: Buffer) => buf.subarray(0, int(random, buf.length));

/**
 * Characters and tokens that parsers trip on: line breaks and other controls, quoting and
 * address specials, digits, non-ASCII (accented, CJK, emoji, a lone surrogate, zero-width and
 * line-separator characters, a dotless i whose case mapping changes length).
 */
export const TRICKY = [
  '\r',
  '\n',
  '\r\n',
  '\0',
  '\t',
  ' ',
  '  ',
  '\x7f',
  '\x1b',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\u200b',
  '\ufeff',
  '"',
  "'",
  '\\',
  '<',
  '>',
  '@',
  '(',
  ')',
  ',',
  ';',
  ':',
  '.',
  '..',
  '[',
  ']',
  '-',
  '_',
  '+',
  '=',
  '/',
  '%',
  '#',
  '0',
  '9',
  '-1',
  '1e999',
  '99999999999999999999',
  'é',
  'ü',
  'İ',
  'ß',
  'ｅ',
  '中文',
  '💌',
  '\ud800',
  'xn--',
  '=?utf-8?q?x?=',
];

/** One to three edits of `text`: inserted tricky tokens or random characters, deletions, repeats, swaps, a cut. */
export function mutateText(random: Random, text: string, extra: readonly string[] = []): string {
  let s = text;
  for (let n = 1 + int(random, 3); n > 0; n--) {
    const at = int(random, s.length + 1);
    switch (int(random, 7)) {
      case 0:
        s = s.slice(0, at) + pick(random, [...TRICKY, ...extra]) + s.slice(at);
        break;
      case 1:
        s = s.slice(0, at) + String.fromCharCode(int(random, 0x3000)) + s.slice(at);
        break;
      case 2:
        s = s.slice(0, at) + s.slice(at + 1 + int(random, 4));
        break;
      case 3: {
        const piece = s.slice(at, at + 1 + int(random, 8));
        s = s.slice(0, at) + piece.repeat(2 + int(random, 3)) + s.slice(at + piece.length);
        break;
      }
      case 4:
        if (s.length > 1) {
          const b = int(random, s.length);
          const chars = [...s];
          [chars[at % chars.length], chars[b % chars.length]] = [chars[b % chars.length]!, chars[at % chars.length]!];
          s = chars.join('');
        }
        break;
      case 5:
        s = s.slice(0, at);
        break;
      default:
        s = s.slice(0, at) + s.slice(at).toUpperCase();
    }
  }
  return s;
}

/** A string of up to `max` - 1 characters drawn from `alphabet` (default: printable ASCII and the tricky tokens). */
export function randomText(
  random: Random,
  max: number,
  alphabet: readonly string[] = [...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)), ...TRICKY],
): string {
  let s = '';
  for (let n = int(random, max); n > 0; n--) s += pick(random, alphabet);
  return s;
}
