// The route index at the end of docs/api.md (§26), made from the declared routes: every path, who
// may call it, the least role it needs (§19.4) and what it does, grouped as the OpenAPI document groups them. `npm run docs:api`
// writes it; test/api/schema-coverage.test.ts fails when the file and the declarations differ.
import { requiredRole, type RouteTable } from './route-table';
import type { Access } from './route';

export const INDEX_BEGIN = '<!-- route-index:begin (npm run docs:api writes this part) -->';
export const INDEX_END = '<!-- route-index:end -->';

const WHO: Record<Access, string> = {
  public: 'anyone',
  team: 'full-access key or session',
  sending: 'any key or session',
  session: 'session only',
};

/** Markdown: one table per tag, routes in declaration order (hidden ones left out). */
export function routeIndex(table: RouteTable): string {
  const byTag = new Map<string, string[]>();
  for (const r of table.routes) {
    if (r.hidden) continue;
    const tag = r.tags[0] ?? 'Other';
    const path = r.path.replace(/:([^/]+)/g, '{$1}');
    const notes = [r.idempotent ? 'idempotent' : '', r.body === 'stream' ? 'streamed body' : ''].filter(Boolean).join(', ');
    const summary = r.summary.replaceAll('|', '\\|');
    if (!byTag.has(tag)) byTag.set(tag, []);
    const role = requiredRole(r);
    byTag.get(tag)!.push(`| \`${r.method}\` | \`${path}\` | ${WHO[r.access]}${notes ? ` (${notes})` : ''} | ${role ?? '—'} | ${summary} |`);
  }
  const out: string[] = [INDEX_BEGIN, ''];
  for (const [tag, rows] of byTag)
    out.push(`### ${tag}`, '', '| Method | Path | Who may call it | Least role | What it does |', '| --- | --- | --- | --- | --- |', ...rows, '');
  out.push(INDEX_END);
  return out.join('\n');
}

/** `doc` with its route index replaced by `index`; null when the markers are missing. */
export function withIndex(doc: string, index: string): string | null {
  const a = doc.indexOf(INDEX_BEGIN);
  const b = doc.indexOf(INDEX_END);
  if (a < 0 || b < a) return null;
  return doc.slice(0, a) + index + doc.slice(b + INDEX_END.length);
}
