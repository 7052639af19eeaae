// Per-recipient placeholders of broadcasts (docs/api.md §13.4): `{{{key|fallback}}}` in subject,
// html, text and preview_text. Keys: RESEND_UNSUBSCRIBE_URL, contact.first_name / last_name /
// email / <property>, and the older FIRST_NAME / LAST_NAME / EMAIL aliases. Whitespace around the
// key and the `|` is tolerated; any other `{{{…}}}` is left exactly as written.
import type { ContactRec } from '../store';

/** Where the text goes: html escapes values; a header field keeps them on one line. */
export type PlaceholderContext = 'html' | 'text' | 'header';

export interface Recipient {
  contact: ContactRec;
  unsubscribeUrl: string;
}

// `{{{`, a key without braces or `|`, then optionally `|` and a fallback without braces.
const PLACEHOLDER = /\{\{\{([^{}|]*)(?:\|([^{}]*))?\}\}\}/g;

const ALIASES: Record<string, string> = { FIRST_NAME: 'first_name', LAST_NAME: 'last_name', EMAIL: 'email' };

/** `& < > " '` as character references (Bun's escaper). */
export const escapeHtml = (s: string): string => Bun.escapeHTML(s);

/**
 * The value a key stands for: a string (possibly empty: then the fallback applies), or undefined
 * when the key is not a placeholder at all.
 */
function lookup(key: string, r: Recipient): string | null | undefined {
  if (key === 'RESEND_UNSUBSCRIBE_URL') return r.unsubscribeUrl;
  // Own keys only: `{{{constructor}}}` is no placeholder (docs/api.md §13.4: left untouched).
  const field = Object.hasOwn(ALIASES, key) ? ALIASES[key] : key.startsWith('contact.') ? key.slice('contact.'.length) : undefined;
  if (!field) return undefined;
  const c = r.contact;
  if (field === 'first_name') return c.first_name;
  if (field === 'last_name') return c.last_name;
  if (field === 'email') return c.email;
  // Any other `contact.<key>` is a contact property; a missing one is empty (the fallback applies).
  const p = Object.hasOwn(c.properties, field) ? c.properties[field] : undefined;
  return p === undefined ? null : String(p.value);
}

/**
 * Replace the placeholders of `template` for one recipient. Values are HTML-escaped in html; the
 * fallback is the author's own text and goes in as written.
 */
export function renderPlaceholders(template: string, r: Recipient, ctx: PlaceholderContext): string {
  return template.replace(PLACEHOLDER, (whole, rawKey: string, rawFallback: string | undefined) => {
    const key = rawKey.trim();
    if (!key) return whole;
    const value = lookup(key, r);
    if (value === undefined) return whole;
    if (value === null || value === '') return rawFallback?.trim() ?? '';
    if (ctx === 'html') return escapeHtml(value);
    // A line break in a value would end the header field (the subject) early.
    if (ctx === 'header') return value.replace(/[\r\n]+/g, ' ');
    return value;
  });
}

/**
 * `preview_text` as a hidden preheader at the top of the html (right after `<body …>` when there is
 * one): inbox lists show it beside the subject, the opened message does not.
 */
export function withPreheader(html: string, preview: string): string {
  const div =
    '<div data-preheader style="display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all">' +
    `${escapeHtml(preview)}</div>`;
  const body = /<body\b[^>]*>/i.exec(html);
  if (!body) return div + html;
  const at = body.index + body[0].length;
  return html.slice(0, at) + div + html.slice(at);
}
