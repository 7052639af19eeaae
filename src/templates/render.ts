// Template text is Mustache (mustache.js, docs/api.md §20.3): Resend writes variables as
// `{{{NAME}}}`, and `{{NAME}}` means the same. In html every value is HTML-escaped, whichever the
// braces — in Mustache triple braces would insert raw HTML, which would let a variable given by a
// send request inject markup into the message; in subject and text values go in as given (subject
// on one line). Partials do not exist here. Parsing is done by mustache.js; nothing is hand-written.
import Mustache from 'mustache';
import { errors } from '../errors';

/** Where rendered text goes: html escapes values; a header field keeps them on one line. */
export type TemplateField = 'html' | 'text' | 'subject';

export type VariableValues = Record<string, string | number>;

type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** A value as text: strings and numbers only (anything else a section could push renders empty). */
const asText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');

const ESCAPES: Record<TemplateField, (v: unknown) => string> = {
  html: (v) => Bun.escapeHTML(asText(v)),
  text: asText,
  // A line break in a value would end the header field early.
  subject: (v) => asText(v).replace(/[\r\n]+/g, ' '),
};

/**
 * A writer for one field: triple braces go through the field's escape like double ones, and the
 * template cache is off (mustache.js would keep every text it ever parsed: memory without bound).
 * mustache.js has no option for either; test/dependencies/mustache.test.ts checks that its Writer
 * still renders triple braces through `unescapedValue` (docs/ARCHITECTURE.md §5).
 */
function writerFor(field: TemplateField): Mustache.Writer {
  const w = new Mustache.Writer();
  (w as { templateCache?: unknown }).templateCache = undefined;
  const config = { escape: ESCAPES[field] };
  w.unescapedValue = (token, context) => w.escapedValue(token, context, config);
  return w;
}

const WRITERS = { html: writerFor('html'), text: writerFor('text'), subject: writerFor('subject') };

/**
 * The tokens of `source`, or 422 naming `field` when it is not valid Mustache (an unclosed tag or
 * section) or uses a partial, which Posthorn has none of.
 */
export function parseTemplate(field: string, source: string): Token[] {
  let tokens: Token[];
  try {
    tokens = WRITERS.text.parse(source) as Token[];
  } catch (e) {
    throw errors.invalidField(field, `it is not a valid template: ${(e as Error).message}.`);
  }
  const walk = (list: Token[]) => {
    for (const t of list) {
      if (t[0] === '>') throw errors.invalidField(field, `partials (\`{{> ${t[1]}}}\`) are not supported.`);
      if (t[0] === '#' || t[0] === '^') walk(t[4] ?? []);
    }
  };
  walk(tokens);
  return tokens;
}

/**
 * The variables `source` cannot render without: those written outside any section (a name inside
 * a section may be a field of the section's value, and a section whose name has no value is left
 * out).
 */
export function variablesUsed(field: string, source: string): string[] {
  const names = new Set<string>();
  for (const t of parseTemplate(field, source)) if (t[0] === 'name' || t[0] === '&') names.add(t[1]);
  return [...names];
}

/** Render `source` with `values` for `field`. Missing names render empty: check them first. */
export function renderTemplate(source: string, values: VariableValues, field: TemplateField): string {
  // A view without a prototype: `{{{constructor}}}` is a missing variable, not Object's.
  const view = Object.assign(Object.create(null) as VariableValues, values);
  return WRITERS[field].render(source, view, undefined, { escape: ESCAPES[field] });
}
