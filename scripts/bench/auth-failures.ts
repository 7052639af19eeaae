#!/usr/bin/env bun
/**
 * AUTH guessing benchmark — `bun scripts/bench/auth-failures.ts [--seconds 20] [--connections 20]`
 *
 * What a password guesser gets from the SMTP listener: `--connections` sessions from one client
 * address (127.0.0.1), each upgrading to TLS and sending `AUTH PLAIN` with a wrong API key again
 * and again (reconnecting whenever the server closes), for `--seconds`. Reported per second: wrong
 * keys the server actually checked (answered 535), and refusals without a check (454 while locked
 * out, 421 + close); with the count in the first second and over the rest, to show the limit taking
 * hold (docs/api.md §17: growing delay from the 4th failure, lockout after 5 in 15 minutes). A
 * second client address is not used here: the per-address limit is tested in test/smtp/limits.test.ts.
 * Posthorn runs as a child process. Nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect as netConnect, type Socket } from 'node:net';
import { startChild, tempDir, freePort, fmt, machine, fail } from './lib';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '20' }, connections: { type: 'string', default: '20' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const CONNECTIONS = Number(opts.connections);
if (!(SECONDS > 0 && CONNECTIONS > 0)) fail('usage: bun scripts/bench/auth-failures.ts [--seconds 20] [--connections 20]');
setQuiet(true);

const port = await freePort();
const target = await startChild(tempDir('posthorn-bench-auth-'), { POSTHORN_SMTP_STARTTLS_PORTS: String(port) });
const t0 = performance.now();
const end = t0 + SECONDS * 1000;
const replies: { at: number; code: number }[] = [];

/** Lines from a socket, one at a time. */
function lineReader(sock: Socket | TLSSocket) {
  let buf = '';
  const waiting: ((line: string | null) => void)[] = [];
  const lines: string[] = [];
  const push = (l: string | null) => (waiting.length ? waiting.shift()!(l) : l !== null && lines.push(l));
  sock.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
      push(buf.slice(0, i));
      buf = buf.slice(i + 2);
    }
  });
  sock.on('close', () => {
    while (waiting.length) waiting.shift()!(null);
  });
  sock.on('error', () => {});
  return {
    next: () => new Promise<string | null>((resolve) => (lines.length ? resolve(lines.shift()!) : waiting.push(resolve))),
    detach: () => sock.removeAllListeners('data'),
  };
}

/** A final reply (the last line of a multi-line one), or null when the connection closed. */
async function reply(r: ReturnType<typeof lineReader>): Promise<string | null> {
  for (;;) {
    const l = await r.next();
    if (l === null || l[3] !== '-') return l;
  }
}

async function session(): Promise<void> {
  const plain = netConnect(port, '127.0.0.1');
  let r = lineReader(plain);
  if (!(await reply(r))?.startsWith('220')) return;
  plain.write('EHLO guesser.test\r\n');
  await reply(r);
  plain.write('STARTTLS\r\n');
  if (!(await reply(r))?.startsWith('220')) return;
  r.detach();
  const tls = tlsConnect({ socket: plain, rejectUnauthorized: false });
  r = lineReader(tls);
  tls.write('EHLO guesser.test\r\n');
  await reply(r);
  while (performance.now() < end) {
    const guess = Buffer.from(`\u0000resend\u0000re_${Math.random().toString(36).slice(2, 10).padEnd(8, 'x')}_${'x'.repeat(24)}`).toString('base64');
    tls.write(`AUTH PLAIN ${guess}\r\n`);
    const line = await reply(r);
    if (line === null) break;
    replies.push({ at: performance.now() - t0, code: Number(line.slice(0, 3)) });
    if (line.startsWith('421')) break;
  }
  tls.destroy();
}

await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < end) await session().catch(() => {});
  }),
);

const rate = (from: number, to: number, code: number) => replies.filter((x) => x.at >= from && x.at < to && x.code === code).length / ((to - from) / 1000);
const all = SECONDS * 1000;
console.log('Posthorn AUTH guessing benchmark');
console.log(`  command   bun scripts/bench/auth-failures.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
console.log(`  machine   ${machine()}`);
console.log(`  load      ${CONNECTIONS} sessions from 127.0.0.1, wrong API keys over STARTTLS, ${SECONDS} s\n`);
console.log(`  answered    first second   after the first second`);
for (const code of [535, 454, 421]) console.log(`  ${code}/s      ${fmt(rate(0, 1000, code), 1).padStart(12)}   ${fmt(rate(1000, all, code), 2).padStart(22)}`);
console.log(`\n  wrong keys checked in all: ${fmt(replies.filter((x) => x.code === 535).length)} in ${SECONDS} s`);
await target.stop();
process.exit(0);
