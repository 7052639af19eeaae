// A template's text as a send renders it (docs/api.md §20.3), for the editor's live preview: parsed
// and rendered by mustache.js, as on the server. Each declared variable takes its fallback; one
// without a value is shown as its `{{{KEY}}}` placeholder. In html every value is HTML-escaped,
// whichever the braces, as the server does.
import Mustache from 'mustache';

export type Field = 'html' | 'text' | 'subject';
export type Values = Record<string, string | number>;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const asText = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const ESCAPES: Record<Field, (v: unknown) => string> = {
  html: (v) => asText(v).replace(/[&<>"']/g, (c) => ENTITIES[c]),
  text: asText,
  subject: (v) => asText(v).replace(/[\r\n]+/g, ' '),
};

/** One writer per field, its cache off: the editor parses a new text at every keystroke. */
function writerFor(field: Field): Mustache.Writer {
  const w = new Mustache.Writer();
  (w as { templateCache?: unknown }).templateCache = undefined;
  w.unescapedValue = (token, context) => w.escapedValue(token, context, { escape: ESCAPES[field] });
  return w;
}
const WRITERS: Record<Field, Mustache.Writer> = { html: writerFor('html'), text: writerFor('text'), subject: writerFor('subject') };

export type Rendered = { ok: true; out: string } | { ok: false; error: string };

/** `source` rendered for `field` with `values`; a name written outside a section without a value shows as its placeholder. */
export function renderPreview(source: string, values: Values, field: Field): Rendered {
  const w = WRITERS[field];
  let tokens: unknown[][];
  try {
    tokens = w.parse(source);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const view: Values = Object.create(null);
  for (const t of tokens) if ((t[0] === 'name' || t[0] === '&') && typeof t[1] === 'string') view[t[1]] = `{{{${t[1]}}}}`;
  Object.assign(view, values);
  return { ok: true, out: w.render(source, view, undefined, { escape: ESCAPES[field] }) };
}
