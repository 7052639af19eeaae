// The rules of the house, enforced: data flows one way (ingress → store → queue → delivery →
// events → webhooks/dashboard), so a part of src/ imports only parts in lower layers
// (docs/ARCHITECTURE.md §2), and no folders import each other in a cycle. Every import line of
// src/ is read with the TypeScript parser; type-only imports do not count (they vanish at build).
import { describe, test, expect } from 'bun:test';
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { bundleWeb } from '../../src/dashboard/bundle';

/** Layers, lowest first. A unit is a top-level folder of src/, or a file directly in src/. */
const LAYERS: string[][] = [
  ['mail', 'net', 'dns', 'errors', 'ids', 'log', 'version', 'config', 'worker-entry', 'event-catalogue', 'bench-profile'], // leaves: standards and vocabulary; bench-profile: benchmarks' thread profiles
  ['work', 'schemas'], // shared machinery: the due-work loop, retry schedules; the wire schemas and their check
  ['store'], // the store interface and its LMDB backend
  ['links', 'limits', 'telemetry', 'acme'], // acme: certificates by ACME (RFC 8555)
  ['accounts', 'domains', 'suppressions', 'events', 'templates', 'sharing', 'topics'],
  ['contacts', 'feedback', 'analytics'],
  ['sending', 'imports'],
  ['insights', 'inboxes'], // deliverability insights of composed messages, rspamd's scores; inboxes: threads, replies, drafts
  ['delivery', 'broadcasts', 'tracking', 'inbound', 'automations', 'health'],
  ['api', 'smtp', 'scheduler', 'dashboard', 'backoffice'], // ways in, and the back office's thread
  ['services'], // the composition root
  ['cli'],
  ['main'],
];
/** Units that import nothing of the app but themselves. */
const PURE = ['mail', 'net', 'dns', 'errors', 'ids', 'log', 'version', 'config', 'worker-entry', 'event-catalogue', 'bench-profile'];

const layerOf = new Map(LAYERS.flatMap((units, i) => units.map((u) => [u, i] as const)));

interface Import {
  from: string; // path relative to src/, e.g. api/server.ts
  to: string | null; // resolved path relative to src/, null when it resolves to nothing
  spec: string;
  line: number;
}

/** The unit of a path relative to src/: its first folder, or the file's base name. */
export function unitOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.tsx?$/, '');
}

/** Value imports of one source text (type-only ones left out), with their specifiers and lines. */
export function valueImports(path: string, text: string): { spec: string; line: number }[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: { spec: string; line: number }[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined) => {
    if (spec && ts.isStringLiteral(spec)) out.push({ spec: spec.text, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const typeOnly =
        !!c &&
        (c.isTypeOnly ||
          (!c.name &&
            !!c.namedBindings &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.length > 0 &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) add(node, node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      const typeOnly =
        node.isTypeOnly ||
        (!!node.exportClause &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) add(node, node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** `spec` imported from `from` (both relative to src/), resolved against the known files. */
function resolveSpec(from: string, spec: string, files: Set<string>): string | null {
  const base = join(dirname(from), spec).replace(/\\/g, '/');
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) if (files.has(candidate)) return candidate;
  return null;
}

/** Every relative import of the given sources (path relative to src/ → text). */
export function importsOf(sources: Map<string, string>): Import[] {
  const files = new Set(sources.keys());
  const out: Import[] = [];
  for (const [path, text] of sources)
    for (const { spec, line } of valueImports(path, text)) {
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue; // packages and node: modules
      if (join(dirname(path), spec).replace(/\\/g, '/').startsWith('../')) continue; // outside src/ (package.json)
      out.push({ from: path, to: resolveSpec(path, spec, files), spec, line });
    }
  return out;
}

/** Broken layering rules, one readable line each. */
export function ruleViolations(imports: Import[]): string[] {
  const problems: string[] = [];
  for (const imp of imports) {
    const where = `src/${imp.from}:${imp.line}`;
    if (imp.to === null) {
      problems.push(`${where} imports '${imp.spec}', which resolves to no file under src/`);
      continue;
    }
    const a = unitOf(imp.from);
    const b = unitOf(imp.to);
    if (a === b) continue;
    for (const u of [a, b]) if (!layerOf.has(u)) problems.push(`${where}: unknown unit ${u}: add it to LAYERS`);
    if (!layerOf.has(a) || !layerOf.has(b)) continue;
    if (PURE.includes(a)) problems.push(`${where} imports src/${imp.to} (${a} → ${b}: ${a} may import nothing of the app)`);
    else if (layerOf.get(b)! >= layerOf.get(a)!)
      problems.push(`${where} imports src/${imp.to} (${a} → ${b}: layer ${layerOf.get(a)} → layer ${layerOf.get(b)})`);
  }
  return [...new Set(problems)];
}

/** Folder-level cycles (strongly connected components of more than one unit, Tarjan). */
export function unitCycles(imports: Import[]): string[] {
  const edges = new Map<string, Set<string>>();
  for (const imp of imports) {
    if (!imp.to) continue;
    const a = unitOf(imp.from);
    const b = unitOf(imp.to);
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    if (!edges.has(b)) edges.set(b, new Set());
    edges.get(a)!.add(b);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  const connect = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) {
        const members = new Set(component);
        const chain = imports
          .filter((i) => i.to && members.has(unitOf(i.from)) && members.has(unitOf(i.to)) && unitOf(i.from) !== unitOf(i.to))
          .map((i) => `  src/${i.from}:${i.line} → src/${i.to}`);
        cycles.push(`cycle between ${component.sort().join(', ')}:\n${[...new Set(chain)].join('\n')}`);
      }
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) connect(v);
  return cycles;
}

function readSources(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.set(relative(root, full).replace(/\\/g, '/'), readFileSync(full, 'utf8'));
      // Data files a module imports (delivery/sites.toml): a unit like any other, importing nothing.
      else if (/\.(toml|json)$/.test(name)) out.set(relative(root, full).replace(/\\/g, '/'), '');
    }
  };
  walk(root);
  return out;
}

const SRC = resolve(import.meta.dir, '../../src');

describe('the layering of src/', () => {
  const imports = importsOf(readSources(SRC));

  test('no import breaks the layering rules', () => {
    expect(imports.length).toBeGreaterThan(100);
    const problems = ruleViolations(imports);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  test('no folder-level import cycle', () => {
    const cycles = unitCycles(imports);
    expect(cycles, cycles.join('\n')).toEqual([]);
  });

  test('every unit of src/ has a layer', () => {
    const units = new Set(readdirSync(SRC).map((n) => n.replace(/\.tsx?$/, '')));
    const unknown = [...units].filter((u) => !layerOf.has(u));
    expect(unknown).toEqual([]);
  });
});

// The dashboard takes its types from the server's wire schemas (src/schemas/routes.ts), and only
// its types: a value import would bundle TypeBox and the schemas into the browser's code.
describe("the dashboard's imports (web/src)", () => {
  const WEB = resolve(import.meta.dir, '../../web/src');
  const SCHEMAS = join(SRC, 'schemas');

  test('of src/schemas are type-only', () => {
    const sources = readSources(WEB);
    const problems: string[] = [];
    for (const [path, text] of sources)
      for (const { spec, line } of valueImports(path, text))
        if (resolve(WEB, dirname(path), spec).startsWith(SCHEMAS)) problems.push(`web/src/${path}:${line} imports '${spec}' as a value: use \`import type\``);
    expect(problems, problems.join('\n')).toEqual([]);
    const typed = [...sources.values()].filter((text) => /from '(\.\.\/)+src\/schemas\//.test(text));
    expect(typed.length).toBeGreaterThan(5);
  });

  test("so the browser's bundle holds no TypeBox", async () => {
    const files = await bundleWeb();
    const code = files.filter((f) => f.name.endsWith('.js')).map((f) => new TextDecoder().decode(f.body));
    expect(code.length).toBeGreaterThan(0);
    expect(code.some((c) => c.includes('TypeBox.Kind'))).toBe(false);
  });
});

describe('the checker itself', () => {
  const sources = new Map([
    ['store/index.ts', `import type { Services } from '../services';\nimport { type Config } from '../config';\nexport const x = 1;`],
    ['sending/submit.ts', `import { x } from '../store';\nexport type { Y } from '../delivery/engine';\nexport const s = 1;`],
    ['delivery/engine.ts', `import { s } from '../sending/submit';\nexport type Y = number;\nexport const load = () => import('../api/app');`],
    ['api/app.ts', `import { back } from '../delivery/engine';\nimport './side';`],
    ['mail/verp.ts', `import { log } from '../log';`],
    ['log.ts', `export const log = 1;`],
    ['delivery/loop.ts', `import { a } from '../delivery/engine';`],
    ['contacts/index.ts', `import { c } from '../feedback';`],
    ['feedback/index.ts', `import { c } from '../contacts';`],
  ]);
  const imports = importsOf(sources);

  test('type-only imports and exports are left out; dynamic and side-effect imports count', () => {
    const specs = imports.map((i) => `${i.from} ${i.spec}`);
    expect(specs).not.toContain('store/index.ts ../services');
    expect(specs).not.toContain('store/index.ts ../config');
    expect(specs).not.toContain('sending/submit.ts ../delivery/engine');
    expect(specs).toContain('delivery/engine.ts ../api/app');
    expect(specs).toContain('api/app.ts ./side');
  });

  test('upward, same-layer and impure-leaf imports are violations; downward ones are not', () => {
    const problems = ruleViolations(imports).join('\n');
    expect(problems).toContain('src/delivery/engine.ts:3 imports src/api/app.ts (delivery → api');
    expect(problems).toContain('(mail → log: mail may import nothing of the app)');
    expect(problems).toContain('(contacts → feedback: layer 5 → layer 5)');
    expect(problems).toContain("src/api/app.ts:2 imports './side', which resolves to no file");
    expect(problems).not.toContain('sending/submit.ts:1');
    expect(problems).not.toContain('delivery/loop.ts');
  });

  test('a cycle between two folders is found and named', () => {
    const cycles = unitCycles(imports).join('\n');
    expect(cycles).toContain('cycle between contacts, feedback');
    expect(cycles).toContain('cycle between api, delivery');
  });
});
