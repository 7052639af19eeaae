// Code cites the repository's own documents by section — `docs/api.md §7.1`, `docs/mail.md §4–5`,
// `docs/api.md §23–§24`, `docs/mail.md §4, "Limits that protect the other clients"` — or by heading
// — `docs/ARCHITECTURE.md, "Two threads"`, `README.md, "Cluster mode"`, `README "Monitoring"`. A
// document is rewritten, its sections renumbered, and a citation points at nothing without anyone
// noticing: this test reads every citation in src/, web/src/, scripts/ and test/ and fails, naming
// file:line, when the document, the numbered section or the named heading does not exist. (mox
// checks its RFC references the same way; RFC citations are not checked here.)
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');
const SCANNED = ['src', 'web/src', 'scripts', 'test'];
const SCANNED_FILE = /\.(ts|tsx|js|mjs|sh)$/;

export interface Citation {
  /** The cited document as written: `docs/api.md`, `README.md`, `README`. */
  doc: string;
  /** A numbered section (`7.1`), when cited by number. */
  section?: string;
  /** A heading's title (or the start of it), when cited by name; with `section`, a heading inside it. */
  title?: string;
  /** 1-based line of the citation's `§` or title. */
  line: number;
  /** The citation as written, for the failure message. */
  text: string;
}

export interface Heading {
  level: number;
  number: string | null;
  /** The title without its number, lower case, spaces collapsed, backticks and asterisks removed. */
  title: string;
}

/** The headings of a Markdown text, outside fenced code blocks. */
export function headingsOf(markdown: string): Heading[] {
  const out: Heading[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const [, hashes = '', text = ''] = m;
    const [, number = null, title = text] = /^(\d+(?:\.\d+)*)\.?\s+(.*)$/.exec(text) ?? [];
    out.push({ level: hashes.length, number, title: normalize(title) });
  }
  return out;
}

function normalize(title: string): string {
  return title.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Why a citation does not resolve against its document's headings, or null when it does. */
export function unresolved(c: Citation, headings: Heading[]): string | null {
  let scope = headings;
  if (c.section !== undefined) {
    const at = headings.findIndex((h) => h.number === c.section);
    const level = headings[at]?.level;
    if (level === undefined) return `no section ${c.section}`;
    // The headings inside the section: up to the next heading of its level or above.
    const end = headings.findIndex((h, i) => i > at && h.level <= level);
    scope = headings.slice(at, end < 0 ? undefined : end);
  }
  if (c.title !== undefined) {
    const want = normalize(c.title);
    // The cited title may be the start of the heading's: "Two threads" for "Two threads (and a signing pool)".
    const found = scope.some((h) => h.title === want || (h.title.startsWith(want) && !/[\p{L}\p{N}]/u.test(h.title.charAt(want.length))));
    if (!found) return c.section !== undefined ? `no heading "${c.title}" in section ${c.section}` : `no heading "${c.title}"`;
  }
  return null;
}

/** A document named in code: a file of docs/, or the README (with or without its extension). */
const DOC = /(?<![\w./-])(?:docs\/[\w.-]+\.md|README(?:\.md)?)(?![\w-])/g;
/** Spaces, and a line break followed by a comment's continuation (`//`, ` * `, `#`). */
const GAP = /(?:[ \t]*\r?\n[ \t]*(?:\/\/+|\*(?!\/)|#)?)?[ \t]*/y;
const NUMBER = /\d+(?:\.\d+)*/y;
const TITLE = /"([^"\n]{1,100}(?:\n[^"\n]{0,100})?)"/y;

/** Every citation of a document in one source text: `<doc> §…` or `<doc>[,] "Title"`. */
export function citationsIn(text: string): Citation[] {
  const out: Citation[] = [];
  const lineAt = (pos: number) => text.slice(0, pos).split('\n').length;
  for (const m of text.matchAll(DOC)) {
    const doc = m[0];
    const afterDoc = m.index + doc.length;
    let pos = afterDoc;
    const sticky = (re: RegExp): RegExpExecArray | null => {
      re.lastIndex = pos;
      const r = re.exec(text);
      if (r) pos = re.lastIndex;
      return r;
    };
    const gap = () => sticky(GAP);
    const title = (): string | null => {
      const t = sticky(TITLE);
      return t ? (t[1] ?? '').replace(/\s*\n\s*(?:\/\/+|\*|#)?\s*/g, ' ') : null;
    };
    const add = (c: Omit<Citation, 'doc' | 'text'>, from: number) =>
      out.push({ doc, ...c, text: `${doc}${from === afterDoc ? '' : ' '}${text.slice(from, pos).replace(/\s*\n\s*(?:\/\/+|\*|#)?\s*/g, ' ')}` });

    gap();
    if (text[pos] === ',' || text[pos] === '"') {
      // By heading: `README.md, "Cluster mode"`, `docs/ARCHITECTURE.md "The walk of one email"`.
      if (text[pos] === ',') pos++;
      gap();
      const line = lineAt(pos);
      const t = title();
      if (t !== null) add({ title: t, line }, afterDoc);
      continue;
    }
    if (text[pos] !== '§') continue; // a document named, not cited: `README.md` alone
    // By section: `§7.1`, `§ "The store"`, then more of the same document's sections —
    // `, §7.3`, `–§24`, `–5`, `and §3.3` — or a heading inside the last one: `, "Two threads"`.
    let section: string | undefined;
    for (;;) {
      const from = pos;
      const line = lineAt(pos);
      pos++; // §
      gap();
      const n = sticky(NUMBER);
      if (n) {
        section = n[0];
        add({ section, line }, from);
      } else {
        const t = title();
        if (t === null) break;
        add({ title: t, line }, from);
        section = undefined;
      }
      // What follows: a range, another section, or a heading inside this one.
      const before = pos;
      gap();
      const sep = text[pos];
      if (sep === '–' || sep === '-') {
        pos++;
        gap();
        if (text[pos] === '§') continue; // `§23–§24`: the end is cited like the start
        const rangeEnd = sticky(NUMBER);
        if (rangeEnd) {
          add({ section: rangeEnd[0], line: lineAt(pos) }, from);
          break;
        }
      } else if (sep === ',' || text.startsWith('and', pos)) {
        pos += sep === ',' ? 1 : 3;
        gap();
        if (text[pos] === '§') continue;
        if (text[pos] === '"' && section !== undefined) {
          const tFrom = pos;
          const tLine = lineAt(pos);
          const t = title();
          if (t !== null) add({ section, title: t, line: tLine }, tFrom);
          break;
        }
      }
      pos = before;
      break;
    }
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return SCANNED_FILE.test(name) ? [full] : [];
  });
}

/** The document a citation names, as a path from the repository's root. */
function docPath(doc: string): string {
  return doc === 'README' ? 'README.md' : doc;
}

describe('citations of the repository documents', () => {
  test('the reader finds every form the code uses', () => {
    const q = '§'; // kept out of this file's own text: this file is scanned too
    const sample = [
      `// one (docs/api.md ${q}7.1), a range (docs/mail.md ${q}4–5), another (docs/api.md ${q}23–${q}24)`,
      `// a list (docs/api.md ${q}1-${q}3, ${q}6, ${q}15; batch items) and a heading (docs/mail.md ${q}4, "Limits`,
      `// that protect the other clients") then docs/ARCHITECTURE.md ${q} "The store" and (README.md, "Cluster mode")`,
      ` * README "Monitoring", a bare README.md, and a split one (docs/api.md`,
      ` * ${q}2 item 15).`,
    ].join('\n');
    const found = citationsIn(sample).map(({ doc, section, title, line }) => [doc, section ?? null, title ?? null, line]);
    expect(found).toEqual([
      ['docs/api.md', '7.1', null, 1],
      ['docs/mail.md', '4', null, 1],
      ['docs/mail.md', '5', null, 1],
      ['docs/api.md', '23', null, 1],
      ['docs/api.md', '24', null, 1],
      ['docs/api.md', '1', null, 2],
      ['docs/api.md', '3', null, 2],
      ['docs/api.md', '6', null, 2],
      ['docs/api.md', '15', null, 2],
      ['docs/mail.md', '4', null, 2],
      ['docs/mail.md', '4', 'Limits that protect the other clients', 2],
      ['docs/ARCHITECTURE.md', null, 'The store', 3],
      ['README.md', null, 'Cluster mode', 3],
      ['README', null, 'Monitoring', 4],
      ['docs/api.md', '2', null, 5],
    ]);
  });

  test('a citation resolves by number, by heading, and by heading inside a section', () => {
    const headings = headingsOf(
      ['# Doc', '## 1. One', '### 1.1 `POST /x` — first', '### Notes (extra)', '## 2. Two', '```', '## 9. in a code block', '```'].join('\n'),
    );
    const check = (c: Partial<Citation>) => unresolved({ doc: 'd', line: 1, text: '', ...c }, headings);
    expect(check({ section: '1.1' })).toBeNull();
    expect(check({ section: '2' })).toBeNull();
    expect(check({ section: '9' })).toBe('no section 9');
    expect(check({ section: '1.2' })).toBe('no section 1.2');
    expect(check({ title: 'Notes' })).toBeNull();
    expect(check({ title: 'Note' })).toBe('no heading "Note"');
    expect(check({ section: '1', title: 'notes' })).toBeNull();
    expect(check({ section: '2', title: 'Notes' })).toBe('no heading "Notes" in section 2');
  });

  test('every citation in src/, web/src/, scripts/ and test/ resolves', () => {
    const headings = new Map<string, Heading[] | null>();
    const problems: string[] = [];
    let count = 0;
    for (const file of SCANNED.flatMap((d) => sourceFiles(join(ROOT, d)))) {
      const where = relative(ROOT, file);
      for (const c of citationsIn(readFileSync(file, 'utf8'))) {
        count++;
        const path = docPath(c.doc);
        let doc = headings.get(path);
        if (doc === undefined) {
          doc = existsSync(join(ROOT, path)) ? headingsOf(readFileSync(join(ROOT, path), 'utf8')) : null;
          headings.set(path, doc);
        }
        const why = doc === null ? `${path} does not exist` : unresolved(c, doc);
        if (why) problems.push(`${where}:${c.line}: ${c.text.trim()} — ${why}`);
      }
    }
    expect(count).toBeGreaterThan(400);
    expect(problems, `${problems.length} citation(s) resolve to nothing:\n${problems.join('\n')}`).toEqual([]);
  });
});
