// Benchmark-only CPU profiles of every thread (README.md "Benchmarks": profile-deliver.ts):
// `bun --cpu-prof` samples the main thread only, while the delivery engine and inbound processor run
// on the back office's thread and DKIM signing on the signer threads. With
// POSTHORN_BENCH_PROFILE_DIR set, each thread that calls this samples its JS stacks (bun:jsc) from
// when the file `start` appears in that directory until `stop` appears, then writes
// `<thread>-<threadId>.json` there (stack traces, aggregated by scripts/bench/profile-deliver.ts).
// Unset (always, outside benchmarks) it does nothing.
import { threadId } from 'node:worker_threads';
import { existsSync, writeFileSync } from 'node:fs';

export function profileThisThreadIfAsked(thread: string): void {
  const dir = process.env.POSTHORN_BENCH_PROFILE_DIR;
  if (!dir) return;
  const waiting = setInterval(() => {
    if (!existsSync(`${dir}/start`)) return;
    clearInterval(waiting);
    void sample(dir, thread);
  }, 50);
  waiting.unref();
}

async function sample(dir: string, thread: string): Promise<void> {
  const { profile } = await import('bun:jsc');
  const t0 = performance.now();
  const result = await profile(
    () =>
      new Promise<void>((done) => {
        const polling = setInterval(() => {
          if (!existsSync(`${dir}/stop`)) return;
          clearInterval(polling);
          done();
        }, 100);
        polling.unref();
      }),
    Number(process.env.POSTHORN_BENCH_PROFILE_INTERVAL_US ?? 1000),
  );
  const wallMs = performance.now() - t0;
  writeFileSync(`${dir}/${thread}-${threadId}.json`, JSON.stringify({ thread, wallMs, stackTraces: result.stackTraces }));
}
