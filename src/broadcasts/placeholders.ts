// Per-recipient placeholders of broadcasts (docs/api.md §13.4): `{{{key|fallback}}}` in subject,
// html, text and preview_text. Keys: RESEND_UNSUBSCRIBE_URL, contact.first_name / last_name /
// email / <property>, and the older FIRST_NAME / LAST_NAME / EMAIL aliases. Whitespace around the
// key and the `|` is tolerated; any other `{{{…}}}` is left exactly as written.
import type { ContactRec } from '../store';
import { propertyValue, type PropertyDefs } from '../contacts/properties';

/** Where the text goes: html escapes values; a header field keeps them on one line. */
export type PlaceholderContext = 'html' | 'text' | 'header';

export interface Recipient {
  contact: ContactRec;
  unsubscribeUrl: string;
  /** The team's contact properties: `{{{contact.<key>}}}` names one (docs/api.md §12.7). */
  properties: PropertyDefs;
}

/** A value, and the fallback to use when it is empty (a property's own fallback value). */
type Looked = { value: string | null; fallback?: string };

// `{{{`, a key without braces or `|`, then optionally `|` and a fallback without braces.
const PLACEHOLDER = /\{\{\{([^{}|]*)(?:\|([^{}]*))?\}\}\}/g;

const ALIASES: Record<string, string> = { FIRST_NAME: 'first_name', LAST_NAME: 'last_name', EMAIL: 'email' };

/** `& < > " '` as character references (Bun's escaper). */
export const escapeHtml = (s: string): string => Bun.escapeHTML(s);

/**
 * The value a key stands for (possibly empty: then a fallback applies), or undefined when the key
 * is not a placeholder at all.
 */
function lookup(key: string, r: Recipient): Looked | undefined {
  if (key === 'RESEND_UNSUBSCRIBE_URL') return { value: r.unsubscribeUrl };
  // Own keys only: `{{{constructor}}}` is no placeholder (docs/api.md §13.4: left untouched).
  const field = Object.hasOwn(ALIASES, key) ? ALIASES[key] : key.startsWith('contact.') ? key.slice('contact.'.length) : undefined;
  if (!field) return undefined;
  const c = r.contact;
  if (field === 'first_name') return { value: c.first_name };
  if (field === 'last_name') return { value: c.last_name };
  if (field === 'email') return { value: c.email };
  // Any other `contact.<key>` is a contact property: the contact's value, else the property's
  // fallback value; an undefined property is empty.
  const def = r.properties.get(field);
  if (!def) return { value: null };
  const value = propertyValue(c, def);
  return { value: value === undefined ? null : String(value), fallback: def.fallback_value === null ? undefined : String(def.fallback_value) };
}

/**
 * Replace the placeholders of `template` for one recipient. An empty value gives the fallback
 * written in the placeholder, else the property's fallback value, else nothing. Values (the
 * property's fallback among them) are escaped for where they go; the placeholder's own fallback is
 * the author's text and goes in as written.
 */
export function renderPlaceholders(template: string, r: Recipient, ctx: PlaceholderContext): string {
  return template.replace(PLACEHOLDER, (whole, rawKey: string, rawFallback: string | undefined) => {
    const key = rawKey.trim();
    if (!key) return whole;
    const looked = lookup(key, r);
    if (looked === undefined) return whole;
    let value = looked.value;
    if (value === null || value === '') {
      if (rawFallback !== undefined) return rawFallback.trim();
      value = looked.fallback ?? '';
    }
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
