// Resend's MCP server (the `resend-mcp` package) as a client would run it: a child process speaking
// MCP over stdio, pointed at a running Posthorn by RESEND_BASE_URL and RESEND_API_KEY (README,
// "Resend's MCP server"). The client here is the protocol's few messages — JSON-RPC 2.0, one message
// a line on stdin and stdout (MCP's stdio transport): `initialize`, then `tools/list` and
// `tools/call`.
//
//   const mcp = await startResendMcp(p.url, p.apiKey);
//   const r = await mcp.call('list-domains', {});   // { isError: false, text: 'Found 1 domain: …' }
//   await mcp.close();
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** resend-mcp's executable (its package.json `bin`). */
export const RESEND_MCP = createRequire(import.meta.url)
  .resolve('resend-mcp/package.json')
  .replace(/package\.json$/, 'dist/index.js');

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

/** A tool's answer: its text parts joined, and whether the server flagged it an error. */
export interface ToolResult {
  isError: boolean;
  text: string;
}

export interface McpClient {
  /** What `initialize` answered: the server's name and version. */
  server: { name: string; version: string };
  tools(): Promise<McpTool[]>;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** What the server wrote to stderr so far (its log). */
  stderr(): string;
  close(): Promise<void>;
}

interface Message {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * Start resend-mcp on `runtime` (default: the Bun running the tests) against `baseUrl`. Its
 * environment holds only what it is told (no RESEND_* of the caller's), and its working directory
 * is an empty one: it loads a `.env` from there (dotenv). Editor tools fetch Resend's dashboard
 * (RESEND_DASHBOARD_URL): pointed at Posthorn too, so nothing leaves 127.0.0.1.
 */
export async function startResendMcp(
  baseUrl: string,
  apiKey: string,
  opts: { runtime?: string; args?: string[]; env?: Record<string, string> } = {},
): Promise<McpClient> {
  const cwd = mkdtempSync(join(tmpdir(), 'resend-mcp-'));
  const child = spawn(opts.runtime ?? process.execPath, [RESEND_MCP, ...(opts.args ?? [])], {
    cwd,
    env: { PATH: process.env.PATH ?? '', RESEND_API_KEY: apiKey, RESEND_BASE_URL: baseUrl, RESEND_DASHBOARD_URL: baseUrl, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    log += d;
  });
  const pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const p of pending.values()) p.reject(new Error(`resend-mcp exited (${code ?? signal}) before answering; stderr:\n${log}`));
      pending.clear();
      resolve();
    }),
  );
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (!line) continue;
      const m = JSON.parse(line) as Message;
      // Requests and notifications of the server's own (none expected) have no answer waiting.
      if (m.id === undefined || !pending.has(m.id)) continue;
      pending.get(m.id)!.resolve(m);
      pending.delete(m.id);
    }
  });
  let next = 0;
  const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const request = async <T>(method: string, params: object): Promise<T> => {
    const id = ++next;
    const answer = new Promise<Message>((resolve, reject) => pending.set(id, { resolve, reject }));
    send({ id, method, params });
    const m = await answer;
    if (m.error) throw new Error(`${method}: ${m.error.message} (${m.error.code})`);
    return m.result as T;
  };

  const init = await request<{ serverInfo: { name: string; version: string } }>('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'posthorn-tests', version: '1' },
  });
  send({ method: 'notifications/initialized' });
  return {
    server: init.serverInfo,
    async tools() {
      const tools: McpTool[] = [];
      for (let cursor: string | undefined; ; ) {
        const page = await request<{ tools: McpTool[]; nextCursor?: string }>('tools/list', cursor ? { cursor } : {});
        tools.push(...page.tools);
        if (!page.nextCursor) return tools;
        cursor = page.nextCursor;
      }
    },
    async call(name, args) {
      const r = await request<{ content?: { type: string; text?: string }[]; isError?: boolean }>('tools/call', { name, arguments: args });
      return { isError: r.isError === true, text: (r.content ?? []).map((c) => c.text ?? `[${c.type}]`).join('\n') };
    },
    stderr: () => log,
    async close() {
      child.stdin.end();
      child.kill('SIGTERM');
      await exited;
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
