// Debian's `wrk` as the HTTP load of bench:compare (compare.ts), a bare Bun.serve as its
// reference, and what the CPU of both sides costs per request, read from /proc.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, freePort, fail, processCpu, threadCpu } from './lib';

function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** CPU seconds a server has used so far: all its threads, and its main (HTTP) thread. */
export type CpuProbe = () => { total: number; main: number };

/** CPU per request, in µs, of the server (all threads, and its HTTP thread alone) and of wrk. */
export interface RequestCpu {
  server: number;
  main: number;
  wrk: number;
}

export interface WrkRun {
  /** Seconds of unmeasured load first: the server's steady state is measured, not its JIT at work. */
  warmUpSeconds: number;
  seconds: number;
  connections: number;
  /** Given, the server's CPU and wrk's are read from /proc during the measured run. */
  cpu?: CpuProbe;
}

/**
 * POST `body` to `url` with `wrk` (2 threads) for `run.warmUpSeconds`, unmeasured, then for
 * `run.seconds`, measured. Given `run.cpu`, the server's CPU and wrk's are read from /proc during
 * the measured run (from its first half second to its last half second), per request.
 */
export async function wrk(
  url: string,
  body: string,
  headers: Record<string, string>,
  run: WrkRun,
): Promise<{ rps: number; non2xx: number; cpu: RequestCpu | null }> {
  const script = join(tempDir('posthorn-bench-wrk-'), 'post.lua');
  const lines = [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(body)}`,
    ...Object.entries(headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
  ];
  writeFileSync(script, `${lines.join('\n')}\n`);
  const args = (seconds: number) => ['wrk', '-t2', `-c${run.connections}`, `-d${seconds}s`, '-s', script, url];
  await Bun.spawn(args(run.warmUpSeconds), { stdout: 'ignore', stderr: 'ignore' }).exited;
  const p = Bun.spawn(args(run.seconds), { stdout: 'pipe', stderr: 'pipe' });
  let used: { seconds: number; server: number; main: number; wrk: number } | null = null;
  if (run.cpu && run.seconds >= 2) {
    await Bun.sleep(500);
    const [s0, w0, t0] = [run.cpu(), processCpu(p.pid).total, performance.now()];
    await Bun.sleep((run.seconds - 1) * 1000);
    const [s1, w1] = [run.cpu(), processCpu(p.pid).total];
    used = { seconds: (performance.now() - t0) / 1000, server: s1.total - s0.total, main: s1.main - s0.main, wrk: w1 - w0 };
  }
  const out = await new Response(p.stdout).text();
  await p.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (!Number.isFinite(rps)) fail(`wrk printed no rate:\n${out}`);
  // Requests in the sampled window, at the run's rate (steady after the warm-up).
  const perRequest = (seconds: number) => (used ? (seconds / (rps * used.seconds)) * 1e6 : NaN);
  return { rps, non2xx, cpu: used && { server: perRequest(used.server), main: perRequest(used.main), wrk: perRequest(used.wrk) } };
}

/** A process's CPU, and its main thread's (the thread whose id is the process's). */
export const cpuOf =
  (pid: number): CpuProbe =>
  () => ({ total: processCpu(pid).total, main: threadCpu(pid).get(pid)?.seconds ?? NaN });

/** A bare Bun.serve in a child process: parses the JSON body and answers an id, nothing else. */
export function startBare(): Promise<{ url: string; pid: number; stop(): void }> {
  return startReference(
    (port) => `Bun.serve({ hostname: '127.0.0.1', port: ${port}, async fetch(req) { await req.json(); return Response.json({ id: crypto.randomUUID() }); } });`,
  );
}

/**
 * The durable reference: a bare Bun.serve that parses the JSON body and answers its id only after
 * one lmdb-js `put` of it is committed — the least any durable accept can do. lmdb-js's defaults,
 * as Posthorn's store uses them: puts of one tick share a commit, each commit fdatasync'd.
 * For a batch (a JSON array), `per: 'email'` puts each item as a record of its own, as a store that
 * keeps each email readable must at least do — in one lmdb-js transaction callback, as Posthorn's
 * store writes (11–15 µs of CPU an email, against 13–19 for a promise per put); `per: 'request'`
 * puts the body whole, once.
 */
export function startDurable(per: 'request' | 'email' = 'request'): Promise<{ url: string; pid: number; stop(): void }> {
  const dir = tempDir('posthorn-bench-durable-');
  return startReference(
    (port) => `import { open } from 'lmdb';
const db = open({ path: ${JSON.stringify(join(dir, 'ref.mdb'))} });
const PER_EMAIL = ${per === 'email'};
Bun.serve({ hostname: '127.0.0.1', port: ${port}, async fetch(req) {
  const body = await req.json();
  if (PER_EMAIL && Array.isArray(body)) {
    const ids = body.map(() => crypto.randomUUID());
    await db.transaction(() => { for (let i = 0; i < body.length; i++) db.put(ids[i], body[i]); });
    return Response.json({ data: ids.map((id) => ({ id })) });
  }
  const id = crypto.randomUUID();
  await db.put(id, body);
  return Response.json({ id });
} });`,
  );
}

async function startReference(source: (port: number) => string): Promise<{ url: string; pid: number; stop(): void }> {
  const port = await freePort();
  const script = join(tempDir('posthorn-bench-ref-'), 'ref.ts');
  writeFileSync(script, source(port));
  // Run from the checkout, so that `lmdb` resolves to the same build Posthorn uses.
  const proc = Bun.spawn([process.execPath, script], {
    stdout: 'ignore',
    stderr: 'inherit',
    cwd: join(import.meta.dir, '../..'),
    env: { ...process.env, NODE_PATH: join(import.meta.dir, '../../node_modules') },
  });
  process.on('exit', () => proc.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}/emails`;
  for (
    let i = 0;
    !(await fetch(url, { method: 'POST', body: '{}' }).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 200) fail('the reference server did not start');
    await Bun.sleep(25);
  }
  return { url, pid: proc.pid, stop: () => proc.kill('SIGTERM') };
}
