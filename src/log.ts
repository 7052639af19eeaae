// Structured logs: one JSON object per line on stdout (README, "Logs").
type Level = 'debug' | 'info' | 'warn' | 'error';

let quiet = process.env.POSTHORN_LOG === 'silent';

export function setQuiet(q: boolean): void {
  quiet = q;
}

export function isQuiet(): boolean {
  return quiet;
}

function emit(level: Level, event: string, fields: Record<string, unknown> = {}): void {
  if (quiet) return;
  const line: Record<string, unknown> = { time: new Date().toISOString(), level, event, ...fields };
  for (const [k, v] of Object.entries(line)) if (v instanceof Error) line[k] = v.message;
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export const log = {
  debug: (event: string, fields?: Record<string, unknown>) => process.env.POSTHORN_DEBUG && emit('debug', event, fields),
  info: (event: string, fields?: Record<string, unknown>) => emit('info', event, fields),
  warn: (event: string, fields?: Record<string, unknown>) => emit('warn', event, fields),
  error: (event: string, fields?: Record<string, unknown>) => emit('error', event, fields),
};
