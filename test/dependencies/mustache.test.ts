// Canary for what src/templates/render.ts reaches into mustache.js for (docs/ARCHITECTURE.md §5,
// "Where Posthorn reaches into a library"): a Writer of its own per field, whose
// `unescapedValue` is replaced so that triple braces are escaped like double ones in html (a
// variable of a send request must not inject markup), whose `templateCache` is off, and the tokens
// its `parse` returns (variables, sections, partials). mustache.js runs here unpatched.
import { describe, test, expect } from 'bun:test';
import Mustache from 'mustache';

const check = (what: string) =>
  `mustache.js changed under src/templates/render.ts: ${what} — read mustache.js of the new version and adapt writerFor/parseTemplate (docs/ARCHITECTURE.md §5)`;

describe('mustache.js: Writer (render.ts writerFor, parseTemplate)', () => {
  test("`{{{x}}}` and `{{&x}}` render through the writer's own `unescapedValue`; `{{x}}` through `escapedValue` with the render config", () => {
    const w = new Mustache.Writer();
    const raw: string[] = [];
    w.unescapedValue = (token) => {
      raw.push(String(token[1]));
      return '[raw]';
    };
    const out = w.render('{{{a}}} {{&b}} {{c}}', { a: '<a>', b: '<b>', c: '<c>' }, undefined, { escape: (v: unknown) => `esc(${String(v)})` });
    expect(raw, check('triple braces no longer go through Writer#unescapedValue')).toEqual(['a', 'b']);
    expect(out, check("the render config's escape")).toBe('[raw] [raw] esc(<c>)');
    const ctx = new Mustache.Context({ c: '<c>' });
    expect(w.escapedValue(['name', 'c'], ctx, { escape: (v: unknown) => `esc(${String(v)})` }), check('Writer#escapedValue(token, context, config)')).toBe(
      'esc(<c>)',
    );
  });

  test('`templateCache` undefined: the writer still parses and renders, and keeps nothing', () => {
    const w = new Mustache.Writer();
    (w as { templateCache?: unknown }).templateCache = undefined;
    expect(w.render('{{a}}', { a: 1 }), check('a Writer without templateCache')).toBe('1');
    expect(w.render('{{a}}', { a: 2 }), check('a Writer without templateCache')).toBe('2');
    expect((w as { templateCache?: unknown }).templateCache, check('templateCache is set again by parse')).toBeUndefined();
  });

  test('parse: [type, name, start, end, children] tokens — name, &, #, ^, >', () => {
    const tokens = new Mustache.Writer().parse('{{a}}{{{b}}}{{&c}}{{#s}}{{d}}{{/s}}{{^i}}x{{/i}}{{> p}}') as unknown as [
      string,
      string,
      number,
      number,
      unknown[]?,
    ][];
    expect(
      tokens.map((t) => [t[0], t[1]]),
      check('token types or names'),
    ).toEqual([
      ['name', 'a'],
      ['&', 'b'],
      ['&', 'c'],
      ['#', 's'],
      ['^', 'i'],
      ['>', 'p'],
    ]);
    expect(
      ((tokens[3]?.[4] ?? []) as [string, string][]).map((t) => [t[0], t[1]]),
      check("a section's children at [4]"),
    ).toEqual([['name', 'd']]);
  });
});
