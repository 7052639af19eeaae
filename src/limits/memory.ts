// Garbage is given back promptly. Large requests and delivery attempts leave tens of megabytes of
// garbage each (a 5 MB attachment arrives as 7 MB of base64 JSON, is decoded, composed into MIME,
// signed and sent), and the collector, left alone, lets it pile up to several times the live set
// before it runs. Twice a second, when the resident size has grown by a step since the last
// collection, one is run (a full collection: the concurrent one, Bun.gc(false), left twice the
// memory behind in bench:memory for no gain in /health latency).

const CHECK_MS = 500;
/** Growth of the resident size that starts a collection. */
const STEP = 64 * 1024 * 1024;

export function keepMemoryTidy(): { stop(): void } {
  let base = process.memoryUsage.rss();
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss - base < STEP) {
      base = Math.min(base, rss);
      return;
    }
    Bun.gc(true);
    base = process.memoryUsage.rss();
  }, CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
