#!/usr/bin/env bun
/**
 * `npm run docs:api` — write the route index of docs/api.md (§26) from the declared routes
 * (src/api/platform/route-index.ts). The routes are built as the server builds them, on a
 * throwaway store in a temp dir; nothing listens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config';
import { createServices, closeServices } from '../src/services';
import { buildApp } from '../src/api/app';
import { RequestLog } from '../src/api/platform/requestlog';
import { routeIndex, withIndex } from '../src/api/platform/route-index';
import { setQuiet } from '../src/log';

setQuiet(true);
const DOC = resolve(import.meta.dir, '../docs/api.md');
const dir = mkdtempSync(join(tmpdir(), 'posthorn-api-index-'));
const svc = await createServices(loadConfig({ env: {}, overrides: { data_dir: dir, 'smtp.starttls_ports': [], 'smtp.tls_ports': [] } }));
try {
  const { table } = buildApp({ ...svc, requestLog: new RequestLog(svc.store) });
  const doc = withIndex(readFileSync(DOC, 'utf8'), routeIndex(table));
  if (doc === null) throw new Error('docs/api.md has no route index markers (§26)');
  writeFileSync(DOC, doc);
  console.log(`docs/api.md: route index of ${table.routes.filter((r) => !r.hidden).length} routes written`);
} finally {
  await closeServices(svc);
  rmSync(dir, { recursive: true, force: true });
}
