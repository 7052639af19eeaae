// scripts/test.ts (npm test): the count line and the recap of failed tests at the end of the run,
// which is what a CI log that keeps only its tail shows.
import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { closingLine, drivesBrowser, failureRecap, inPgPass, MarkerCounter, parseSummary } from '../../scripts/test.ts';

const OUTPUT = [
  'test/a.test.ts:',
  '(pass) a > one [1.00ms]',
  'error: expect(received).toBe(expected)',
  'Expected: 2',
  '(fail) a > two [2.00ms]',
  '',
  'test/b.test.ts:',
  '\u001b[32m(pass)\u001b[0m b > one',
  '',
  // bun lists the failed tests again at the end: they are not counted twice.
  '1 tests failed:',
  '(fail) a > two [2.00ms]',
  '',
  ' 2 pass',
  ' 1 fail',
  'Ran 3 tests across 2 files. [1.00s]',
  '',
].join('\n');

describe('npm test summary', () => {
  test('markers are counted across chunk boundaries; each failure keeps its file and its error', () => {
    const m = new MarkerCounter();
    for (let i = 0; i < OUTPUT.length; i += 7) m.push(OUTPUT.slice(i, i + 7));
    m.end();
    expect(m.counts).toEqual({ pass: 2, fail: 1, skip: 0, todo: 0 });
    expect(m.failures).toEqual([{ file: 'test/a.test.ts', lines: ['error: expect(received).toBe(expected)', 'Expected: 2', '(fail) a > two [2.00ms]'] }]);
    const recap = failureRecap(m.failures, 1);
    expect(recap).toContain('==> failed tests (1)');
    expect(recap).toContain('--- test/a.test.ts\nerror: expect(received).toBe(expected)');
    expect(failureRecap([], 0)).toBe('');
  });

  test('the closing line comes from bun summary; a non-zero exit with no failed test still fails', () => {
    const s = parseSummary(OUTPUT);
    expect(s).toMatchObject({ pass: 2, fail: 1, ran: 3, files: 2 });
    expect(closingLine(s, 1)).toEqual({ line: '2 passed, 1 failed', code: 1 });
    expect(closingLine({ ...s!, fail: 0 }, 1).line).toBe('2 passed, 1 failed');
    expect(closingLine(null, 0)).toEqual({ line: '0 passed, 1 failed', code: 1 });
  });
});

describe('how a full run splits the files', () => {
  test('a file that launches Chromium runs with the browser files, alone; the others beside the PostgreSQL pass', () => {
    const source = (f: string) => readFileSync(resolve(import.meta.dir, '..', f), 'utf8');
    expect(drivesBrowser(source('dashboard/dashboard.test.ts'))).toBe(true);
    expect(drivesBrowser(source('security/red-team.test.ts'))).toBe(true);
    expect(drivesBrowser(source('api/emails.test.ts'))).toBe(false);
    expect(drivesBrowser(source('helpers/emails.ts'))).toBe(false);
  });

  test("PG_PASS's folders and files, and nothing that merely starts like them", () => {
    expect(inPgPass('./test/api/emails.test.ts')).toBe(true);
    expect(inPgPass('./test/automations/api.test.ts')).toBe(true);
    expect(inPgPass('./test/automations/crash.test.ts')).toBe(false);
    expect(inPgPass('./test/api-extra/x.test.ts')).toBe(false);
  });
});
