#!/usr/bin/env node
// `npx posthorn <command> [args…]` in a checkout (after `npm ci`): runs src/main.ts with the Bun
// that npm installed for this package (devDependency `bun`), so no global Bun is needed.
// Signals are forwarded to Bun and its exit code (or signal) becomes ours.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function findBun() {
  const local = join(root, 'node_modules', 'bun', 'bin', 'bun.exe');
  if (existsSync(local)) return local;
  try {
    return createRequire(join(root, 'package.json')).resolve('bun/bin/bun.exe');
  } catch {
    return null;
  }
}

const bun = findBun();
if (!bun) {
  console.error(`posthorn: Bun not found under ${join(root, 'node_modules')} — run \`npm ci\` in ${root} first.`);
  process.exit(1);
}

const child = spawn(bun, [join(root, 'src', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });

/** @param {NodeJS.Signals} signal */
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) process.on(signal, () => forward(signal));

child.on('error', (error) => {
  console.error(`posthorn: cannot start ${bun}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal (exit status 128+n), with our own handlers out of the way.
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // Fallback if the signal does not terminate us.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 1)), 100);
    return;
  }
  process.exit(code ?? 1);
});
