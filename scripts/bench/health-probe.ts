// bench:memory's probe of the server (memory.ts): GET /health every 200 ms and its RSS, timed on a
// thread of its own, so that what the load generator does on its thread (encoding 7 MB bodies,
// collecting their garbage) is not counted as the server's latency.
import { readFileSync } from 'node:fs';

declare const self: Worker;

self.onmessage = async (e: MessageEvent<{ url: string; pid: number }>) => {
  const { url, pid } = e.data;
  const kb = (status: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  let sampling = true;
  self.onmessage = () => {
    sampling = false;
  };
  while (sampling) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const t0 = performance.now();
    await fetch(`${url}/health`).then((r) => r.arrayBuffer());
    self.postMessage({ rss: kb(status, 'VmRSS'), anon: kb(status, 'RssAnon'), health: performance.now() - t0 });
    await Bun.sleep(200);
  }
  self.postMessage('done');
};
