#!/usr/bin/env bun
/**
 * `npm test` — run the test suite with the pinned Bun and finish with one plain summary line.
 *
 *   npm test                      every test under test/, then the API suites again on PostgreSQL
 *   npm test -- test/api          only files whose path contains test/api (bun's own filters)
 *   npm test -- -t "domains" --bail
 *   POSTHORN_TEST_STORE=pg npm test -- test/api    those files on PostgreSQL (cluster mode)
 *
 * First, scripts/preflight.sh checks the Debian packages the tests drive (PostgreSQL, Chromium,
 * swaks, dig, OpenSSL 3, rspamd) and installs the missing ones when it may; when it cannot, it prints the
 * `apt-get install` line to run and the tests do not start (`0 passed, 1 failed`).
 *
 * A full run (no paths or filters of the caller's) has a second pass: the API suites (PG_PASS) run
 * again with POSTHORN_TEST_STORE=pg, against a private PostgreSQL server the tests start
 * (test/helpers/postgres.ts); the closing line adds both passes up. The files that drive Chromium
 * run last, alone (two at once push pages past their time budgets on a small machine); the other
 * files of the first pass run with the PostgreSQL pass beside them, in a second `bun test` whose
 * output is printed when it ends — most tests wait on sockets and child processes, and the two
 * together fill the cores one leaves half idle.
 *
 * Runs `bun test` as a child process (process.execPath, so the same Bun that runs this script),
 * with POSTHORN_LOG=silent, POSTHORN_CHECK_RESPONSES=1 (every JSON answer of the API is checked against its
 * route's response schema: src/api/platform/register.ts) and --timeout=60000 (unless given). The child's stdout and stderr pass
 * through unchanged; stderr is also read for bun's summary (` N pass`, ` N fail`, ` N skip`, ` N todo`, ` N error`,
 * `Ran N tests across N files.`). The last line printed is always
 *
 *   N passed, N failed[, N skipped]
 *
 * (skipped = skip + todo, printed only when non-zero), and the exit code is bun's. Two guards keep
 * the line honest: errors outside tests count as failures when bun reports no failed test but
 * exits non-zero, and when no summary can be found (no tests, bun crashed or was killed) the line
 * is `0 passed, 1 failed` and the exit code is 1. With --bail bun prints no counts; the per-test
 * result lines seen on the way stand in for them.
 */
import { resolve } from 'node:path';
import { constants } from 'node:os';
import { readFileSync } from 'node:fs';

const ROOT = resolve(import.meta.dir, '..');
const DEFAULT_TIMEOUT_MS = 60_000;
/** What a full run tests a second time against PostgreSQL: the HTTP API and the SDK's methods. */
export const PG_PASS = ['./test/api', './test/automations/api.test.ts', './test/inboxes/inboxes-sdk.test.ts'];

/** bun test flags that take a value as the next argument (when not written as --flag=value). */
const VALUE_FLAGS = new Set([
  '-t',
  '--test-name-pattern',
  '--timeout',
  '--rerun-each',
  '--retry',
  '--seed',
  '--coverage-reporter',
  '--coverage-dir',
  '--reporter',
  '--reporter-outfile',
  '--max-concurrency',
  '--path-ignore-patterns',
  '--parallel-delay',
  '--shard',
  '--timings',
  '--preload',
  '-r',
]);
/** Flags whose value is optional: a following bare number is taken as their value. */
const OPTIONAL_NUMBER_FLAGS = new Set(['--bail', '--parallel']);

/** True when the arguments name test files or filters of their own (then test/ is not added). */
function hasPositional(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return i + 1 < args.length;
    if (a.startsWith('-')) {
      if (a.includes('=')) continue;
      if (VALUE_FLAGS.has(a)) i++;
      else if (OPTIONAL_NUMBER_FLAGS.has(a) && /^\d+$/.test(args[i + 1] ?? '')) i++;
      continue;
    }
    return true;
  }
  return false;
}

export interface Summary {
  pass: number;
  fail: number;
  skip: number;
  todo: number;
  error: number;
  ran: number;
  files: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes this strips.
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Per-test result markers bun prints at the start of a line (plain and coloured output). */
const MARKERS: [RegExp, 'pass' | 'fail' | 'skip' | 'todo'][] = [
  [/^\s*(\(pass\)|\u2713) /, 'pass'],
  [/^\s*(\(fail\)|\u2717) /, 'fail'],
  [/^\s*(\(skip\)|\u00bb) /, 'skip'],
  [/^\s*(\(todo\)|\u270e) /, 'todo'],
];

/** How many lines above a failed test's marker are kept for the recap (bun prints the error there). */
const FAIL_CONTEXT = 30;
/** At most this many failures are recapped: the recap must stay short enough to be read. */
const FAIL_RECAP_MAX = 10;

/**
 * Counts result markers line by line while the output streams past, and keeps each failed test
 * with its file and the lines bun printed above it (its error), so the run's last lines can name
 * the failures: a CI log often keeps only its tail.
 */
export class MarkerCounter {
  counts = { pass: 0, fail: 0, skip: 0, todo: 0 };
  failures: { file: string; lines: string[] }[] = [];
  private file = '';
  private recent: string[] = [];
  /** In bun's closing list of the failed tests, which repeats their markers: not counted again. */
  private closing = false;
  private partial = '';
  push(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.line(line);
  }
  end(): void {
    if (this.partial) this.line(this.partial);
    this.partial = '';
  }
  private line(raw: string): void {
    const line = raw.replace(ANSI, '');
    // bun names each file on a line of its own before that file's results.
    if (/^\S.*\.(test|spec)\.[cm]?[jt]sx?:$/.test(line)) {
      this.file = line.slice(0, -1);
      this.recent = [];
      this.closing = false;
      return;
    }
    if (/^\s*\d+ tests? failed:\s*$/.test(line)) this.closing = true;
    if (this.closing) return;
    for (const [re, kind] of MARKERS) {
      if (!re.test(line)) continue;
      this.counts[kind]++;
      if (kind === 'fail' && this.failures.length < FAIL_RECAP_MAX) this.failures.push({ file: this.file, lines: [...this.recent, line] });
      if (kind === 'pass' || kind === 'fail') this.recent = [];
      return;
    }
    this.recent.push(line);
    if (this.recent.length > FAIL_CONTEXT) this.recent.shift();
  }
}

/** The failed tests again, each with its error, for the end of the run. Empty when none failed. */
export function failureRecap(failures: MarkerCounter['failures'], total: number): string {
  if (failures.length === 0) return '';
  const parts = failures.map((f) => `--- ${f.file || '(file unknown)'}\n${f.lines.join('\n')}`);
  const more = total > failures.length ? `\n(${total - failures.length} more failed; see above)` : '';
  return `\n==> failed tests (${total})\n${parts.join('\n')}${more}\n`;
}

/**
 * Bun's closing summary from the tail of its stderr: the count lines directly above the last
 * `Ran N tests across N files.` line. Null when there is no such line. With --bail bun prints no
 * counts; then the per-test markers counted on the way (if given) stand in for them.
 */
export function parseSummary(stderr: string, markers?: MarkerCounter['counts']): Summary | null {
  const lines = stderr.replace(ANSI, '').split(/\r?\n/);
  let ranAt = -1;
  let ran = 0;
  let files = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^\s*Ran (\d+) tests? across (\d+) files?\b/.exec(lines[i]!);
    if (m) {
      ranAt = i;
      ran = Number(m[1]);
      files = Number(m[2]);
      break;
    }
  }
  if (ranAt < 0) return null;
  const s: Summary = { pass: 0, fail: 0, skip: 0, todo: 0, error: 0, ran, files };
  let seen = false;
  for (let i = ranAt - 1; i >= 0; i--) {
    const line = lines[i]!;
    // ` 3 pass`, ` 1 fail`, ` 2 skip`, ` 1 todo`, ` 1 error`, ` 6 filtered out`, ` 9 expect() calls`, …
    const m = /^\s*(\d+) ([a-z][a-z() ]*?)\s*$/.exec(line);
    if (!m) {
      if (line.trim() === '' && !seen) continue;
      break; // the summary block ends at the first line that is not a count
    }
    seen = true;
    const kind = m[2]!.startsWith('error') ? 'error' : m[2]!;
    if (kind === 'pass' || kind === 'fail' || kind === 'skip' || kind === 'todo' || kind === 'error') s[kind] = Number(m[1]);
  }
  if (!seen) {
    if (!markers) return null;
    Object.assign(s, markers);
  }
  return s;
}

export function closingLine(s: Summary | null, code: number): { line: string; code: number } {
  if (!s) return { line: '0 passed, 1 failed', code: 1 };
  let failed = s.fail;
  if (code !== 0 && failed === 0) failed = Math.max(s.error, 1);
  const skipped = s.skip + s.todo;
  return { line: `${s.pass} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`, code };
}

function write(stream: NodeJS.WriteStream, chunk: string | Uint8Array): Promise<void> {
  return new Promise((done) => {
    stream.write(chunk, () => done());
  });
}

type Pass = { summary: Summary | null; code: number; failures: MarkerCounter['failures']; failed: number; held?: Uint8Array[] };

/**
 * One `bun test` child: its output passes through, or with `held` is kept (stdout and stderr in the
 * order they came) and returned for the caller to print once the pass beside it has ended, so the
 * two do not interleave; its summary and exit code come back.
 */
async function runBun(args: string[], extraEnv: Record<string, string>, held = false): Promise<Pass> {
  const env: Record<string, string | undefined> = { ...process.env, POSTHORN_LOG: 'silent', POSTHORN_CHECK_RESPONSES: '1', ...extraEnv };
  // stderr goes through a pipe: keep bun's colours when our own stderr is a terminal.
  if (process.stderr.isTTY && env.FORCE_COLOR === undefined && env.NO_COLOR === undefined) env.FORCE_COLOR = '1';

  const child = Bun.spawn(args, { cwd: ROOT, env, stdin: 'inherit', stdout: held ? 'pipe' : 'inherit', stderr: 'pipe' });
  const forward = (signal: NodeJS.Signals) => {
    if (child.exitCode === null) child.kill(signal);
  };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));

  const kept: Uint8Array[] = [];
  const keepStdout = async () => {
    if (!held) return;
    const out = (child.stdout as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await out.read();
      if (done) return;
      kept.push(value);
    }
  };
  const stdoutDone = keepStdout();

  // Keep only the tail of stderr: the summary is at the very end, test output can be large.
  const KEEP = 256 * 1024;
  const decoder = new TextDecoder();
  const markers = new MarkerCounter();
  let tail = '';
  const reader = child.stderr.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    if (held) kept.push(chunk);
    else await write(process.stderr, chunk);
    const text = decoder.decode(chunk, { stream: true });
    markers.push(text);
    tail += text;
    if (tail.length > 2 * KEEP) tail = tail.slice(-KEEP);
  }
  const rest = decoder.decode();
  markers.push(rest);
  markers.end();
  tail += rest;
  await stdoutDone;
  await child.exited;

  let code = child.exitCode ?? 1;
  if (child.signalCode) code = 128 + ((constants.signals as Record<string, number>)[child.signalCode] ?? 1);
  return { summary: parseSummary(tail, markers.counts), code, failures: markers.failures, failed: markers.counts.fail, held: held ? kept : undefined };
}

/** Passes as one: their summaries added, the first failing exit code, the failures of all. */
function combine(passes: readonly Pass[]): Pass {
  const [first, ...rest] = passes;
  return rest.reduce(
    (a, b) => ({
      summary: addSummaries(a.summary, b.summary),
      code: a.code || b.code,
      failures: [...a.failures, ...b.failures].slice(0, FAIL_RECAP_MAX),
      failed: a.failed + b.failed,
    }),
    first!,
  );
}

/** The suite's files (as bun finds them: `*.test.ts` under test/), by path. */
function testFiles(): string[] {
  return [...new Bun.Glob('test/**/*.test.ts').scanSync({ cwd: ROOT })].sort().map((f) => `./${f}`);
}

/** A file drives Chromium when it launches it (test/helpers/browser.ts `launchBrowser`). */
export const drivesBrowser = (source: string): boolean => /\blaunchBrowser\(/.test(source);

/** True when `file` (`./test/…`) is one of PG_PASS's files or under one of its folders. */
export const inPgPass = (file: string): boolean => PG_PASS.some((p) => file === p || file.startsWith(`${p}/`));

/** Two passes' summaries as one (null when either has none: that pass crashed). */
export function addSummaries(a: Summary | null, b: Summary | null): Summary | null {
  if (!a || !b) return null;
  return {
    pass: a.pass + b.pass,
    fail: a.fail + b.fail,
    skip: a.skip + b.skip,
    todo: a.todo + b.todo,
    error: a.error + b.error,
    ran: a.ran + b.ran,
    files: a.files + b.files,
  };
}

/** scripts/preflight.sh: true once the system has what the tests need (its output passes through). */
function preflight(): boolean {
  const r = Bun.spawnSync(['bash', resolve(ROOT, 'scripts/preflight.sh')], { cwd: ROOT, stdin: 'inherit', stdout: 'inherit', stderr: 'inherit' });
  return r.exitCode === 0;
}

/**
 * Every file, then PG_PASS's files on PostgreSQL: the files that do not drive a browser with the
 * PostgreSQL pass's beside them, then those that do, alone.
 */
async function fullRun(base: string[], extra: string[]): Promise<Pass> {
  const files = testFiles();
  const browser = new Set(files.filter((f) => drivesBrowser(readFileSync(resolve(ROOT, f), 'utf8'))));
  const plain = files.filter((f) => !browser.has(f));
  const pg = { POSTHORN_TEST_STORE: 'pg' };
  const pgPlain = plain.filter(inPgPass);
  const pgBrowser = [...browser].filter(inPgPass);
  await write(
    process.stderr,
    `\n==> ${plain.length} files that drive no browser; beside them, ${pgPlain.length} of the API suites on PostgreSQL (POSTHORN_TEST_STORE=pg: ${PG_PASS.join(' ')}), printed when they end\n`,
  );
  const [main, onPg] = await Promise.all([runBun([...base, ...extra, ...plain], {}), runBun([...base, ...extra, ...pgPlain], pg, true)]);
  await write(process.stderr, `\n==> the API suites on PostgreSQL, run beside the above\n`);
  for (const chunk of onPg.held ?? []) await write(process.stderr, chunk);
  await write(process.stderr, `\n==> ${browser.size} files that drive Chromium, one at a time\n`);
  const inBrowser = await runBun([...base, ...extra, ...browser], {});
  const passes = [main, onPg, inBrowser];
  if (pgBrowser.length) {
    await write(process.stderr, `\n==> of those, the API suites on PostgreSQL: ${pgBrowser.join(' ')}\n`);
    passes.push(await runBun([...base, ...extra, ...pgBrowser], pg));
  }
  return combine(passes);
}

async function main(): Promise<number> {
  if (!preflight()) {
    await write(process.stdout, '\n0 passed, 1 failed\n');
    return 1;
  }
  const extra = process.argv.slice(2);
  const base = [process.execPath, 'test'];
  // Bun 1.4.5 ignores `[test] timeout` in bunfig.toml (checked): give the generous per-test
  // timeout here — the tests drive real sockets and child processes — unless the caller set one.
  if (!extra.some((a) => a === '--timeout' || a.startsWith('--timeout='))) base.push(`--timeout=${DEFAULT_TIMEOUT_MS}`);
  const full = !hasPositional(extra);
  const run = full ? await fullRun(base, extra) : await runBun([...base, ...extra], {});
  const recap = failureRecap(run.failures, run.failed);
  if (recap) await write(process.stdout, recap);
  // Any pass failing fails the run (closingLine's guards then hold for the sum).
  const result = closingLine(run.summary, run.code);
  await write(process.stdout, `\n${result.line}\n`);
  return result.code;
}

if (import.meta.main) {
  main().then(
    (code) => process.exit(code),
    async (err) => {
      await write(process.stderr, `scripts/test.ts: ${(err as Error)?.stack ?? err}\n`);
      await write(process.stdout, '\n0 passed, 1 failed\n');
      process.exit(1);
    },
  );
}
