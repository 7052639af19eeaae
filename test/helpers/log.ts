// The structured log as a test sees it: every line written while a function runs, parsed.
import { setQuiet } from '../../src/log';

/** Run `fn` with the log on and captured; resolves to its lines (JSON objects), in order. */
export async function captureLog(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  setQuiet(false);
  try {
    await fn();
  } finally {
    setQuiet(true);
    process.stdout.write = write;
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}
