// Structured logs: one JSON object per line on stdout (README, "Logs"). The back office's thread
// hands its lines to the main thread (backoffice/), so one thread writes stdout and lines never mix.
type Level = 'debug' | 'info' | 'warn' | 'error';

let quiet = process.env.POSTHORN_LOG === 'silent';
const quietWatchers: ((q: boolean) => void)[] = [];

export function setQuiet(q: boolean): void {
  quiet = q;
  for (const w of quietWatchers) w(q);
}

/** Be told when logging is switched on or off (the back office's thread follows the main one). */
export function watchQuiet(fn: (q: boolean) => void): () => void {
  quietWatchers.push(fn);
  return () => void quietWatchers.splice(quietWatchers.indexOf(fn) >>> 0, 1);
}

/** Where finished lines go: stdout, or the main thread from the back office's. */
let sink: (line: string) => void = (line) => {
  process.stdout.write(line);
};

export function setSink(fn: (line: string) => void): void {
  sink = fn;
}

/** A line another thread finished, written here. */
export function writeLine(line: string): void {
  sink(line);
}

export function isQuiet(): boolean {
  return quiet;
}

function emit(level: Level, event: string, fields: Record<string, unknown> = {}): void {
  if (quiet) return;
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, event, ...fields };
  for (const [k, v] of Object.entries(line)) if (v instanceof Error) line[k] = v.message;
  sink(`${JSON.stringify(line)}\n`);
}

export const log = {
  debug: (event: string, fields?: Record<string, unknown>) => process.env.POSTHORN_DEBUG && emit('debug', event, fields),
  info: (event: string, fields?: Record<string, unknown>) => emit('info', event, fields),
  warn: (event: string, fields?: Record<string, unknown>) => emit('warn', event, fields),
  error: (event: string, fields?: Record<string, unknown>) => emit('error', event, fields),
};
