// A broadcast's placeholders (`{{{key|fallback}}}`, docs/api.md §13.4) filled from one contact, for
// the editor's preview: the rules of src/broadcasts/placeholders.ts (keys, aliases, fallbacks,
// escaping in html) over the contact as the API returns it. The unsubscribe link points nowhere.
import type { Contact } from '../../../src/schemas/contacts';

const PLACEHOLDER = /\{\{\{([^{}|]*)(?:\|([^{}]*))?\}\}\}/g;
const ALIASES: Record<string, string> = { FIRST_NAME: 'first_name', LAST_NAME: 'last_name', EMAIL: 'email' };
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

type PreviewContact = Pick<Contact, 'email' | 'first_name' | 'last_name'> & { properties?: Contact['properties'] };

export function fillForContact(source: string, contact: PreviewContact | null, ctx: 'html' | 'text'): string {
  return source.replace(PLACEHOLDER, (whole, rawKey: string, rawFallback: string | undefined) => {
    const key = rawKey.trim();
    if (key === 'RESEND_UNSUBSCRIBE_URL') return '#unsubscribe';
    const field = Object.hasOwn(ALIASES, key) ? ALIASES[key]! : key.startsWith('contact.') ? key.slice('contact.'.length) : undefined;
    if (!field) return whole;
    if (!contact) return rawFallback !== undefined ? rawFallback.trim() : whole;
    const raw = field === 'first_name' || field === 'last_name' || field === 'email' ? contact[field] : contact.properties?.[field]?.value;
    const value = raw === null || raw === undefined ? '' : String(raw);
    if (!value) return rawFallback?.trim() ?? '';
    return ctx === 'html' ? value.replace(/[&<>"']/g, (c) => ENTITIES[c]!) : value;
  });
}
