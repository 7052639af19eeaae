#!/usr/bin/env bun
/**
 * DKIM signing cost — `bun scripts/bench/dkim-sign.ts [--count 3000]`.
 *
 * Signs one message as the delivery path does (src/mail/dkim.ts: rsa-sha256, relaxed/relaxed, an
 * RSA-2048 key), `--count` times after a warm-up, on this thread, and prints µs per signature of:
 *   dkimSignature      what a delivery attempt runs (mailauth's parts, key parsed once, RSA by
 *                      OpenSSL where libcrypto.so.3 loads: src/mail/openssl.ts)
 *   mailauth dkimSign  mailauth's own signer, which parses the PEM key for every message
 *   node:crypto sign   the RSA signature alone, Bun's built-in BoringSSL, key parsed once
 *   OpenSSL sign       the RSA signature alone, the system's libcrypto through bun:ffi
 * and then the same message through a signing pool of one thread (src/delivery/signers.ts), 16 in
 * flight as a delivery's connections keep it: signatures per second, and the CPU per signature of
 * this thread (handing over and taking back) and of the signing thread (from /proc/self/task).
 * Compare `openssl speed rsa2048` on the same machine for OpenSSL's own figure.
 */
import { parseArgs } from 'node:util';
import { createPrivateKey, sign } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { dkimSignature } from '../../src/mail/dkim';
import { openSsl } from '../../src/mail/openssl';
import { generateDkimKey } from '../../src/domains/dkim';
import { SigningPool } from '../../src/delivery/signers';
import { threadCpu } from './lib';

const { values: opts } = parseArgs({ args: process.argv.slice(2), options: { count: { type: 'string', default: '3000' } }, strict: true });
const N = Number(opts.count);
if (!(Number.isInteger(N) && N > 0)) throw new Error('--count must be a positive integer');

const key = await generateDkimKey('bench');
const message = Buffer.from(
  [
    'Content-Type: multipart/alternative; boundary="--_b-1"',
    'From: Bench <bench@bench.test>',
    'To: user1@dest.test',
    'Subject: Benchmark 1',
    'Message-ID: <0195608a-51e4-70ed-a079-d3bde8e25d94@bench.test>',
    'Date: Wed, 25 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    '',
    '----_b-1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello number 1',
    '----_b-1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Hello number 1</p>',
    '----_b-1--',
    '',
  ].join('\r\n'),
);
const domain = { name: 'bench.test', dkim: { selector: key.selector, private_key: key.private_key } };
const object = createPrivateKey(key.private_key);
const native = openSsl()?.rsaKey(object.export({ format: 'der', type: 'pkcs8' })) ?? null;
const header = message.subarray(0, 400);

async function time(name: string, op: () => unknown): Promise<void> {
  for (let i = 0; i < Math.min(500, N); i++) await op();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await op();
  console.log(`${name.padEnd(20)}${(((performance.now() - t0) / N) * 1000).toFixed(0).padStart(6)} µs`);
}

console.log(`DKIM signing, RSA-2048, ${N} signatures each (µs per signature)`);
await time('dkimSignature', () => dkimSignature(message, domain));
// mailauth reads the signatures to make from `signatureData` only.
const signature = {
  signingDomain: domain.name,
  selector: key.selector,
  privateKey: key.private_key,
  algorithm: 'rsa-sha256',
  canonicalization: 'relaxed/relaxed',
};
await time('mailauth dkimSign', async () => {
  if (!(await dkimSign(message, { ...signature, signatureData: [signature] })).signatures) throw new Error('mailauth signed nothing');
});
await time('node:crypto sign', () => sign('sha256', header, object));
if (native) await time('OpenSSL sign', () => native.sign(header));
else console.log('OpenSSL sign        libcrypto.so.3 did not load');

const pool = new SigningPool(1);
await pool.ready();
const through = async (n: number) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < n) await pool.sign(message, domain);
    }),
  );
};
await through(Math.min(500, N));
const before = threadCpu('self');
const t0 = performance.now();
await through(N);
const seconds = (performance.now() - t0) / 1000;
const after = threadCpu('self');
pool.close();
const used = (tid: number) => (after.get(tid)!.seconds - (before.get(tid)?.seconds ?? 0)) / N;
const caller = used(process.pid);
const signer = Math.max(...[...after.keys()].filter((t) => after.get(t)!.name === 'Worker').map(used));
console.log(
  `signing pool, 1 thread, 16 in flight: ${Math.round(N / seconds)} signatures/s; CPU per signature: this thread ${(caller * 1e6).toFixed(0)} µs, the signing thread ${(signer * 1e6).toFixed(0)} µs`,
);
