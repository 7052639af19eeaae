// A broadcast's test send (docs/api.md §13.7, a Posthorn extension; Resend's dashboard has a "Test
// email" button, its API no such route): a draft broadcast rendered for up to 5 addresses before
// the real send, each one email through the one sending core (`prepare` → `commit`), as a recipient's
// would be — placeholders filled from the team's contact with that address, else their fallbacks;
// List-Unsubscribe — with the subject marked `[Test] ` and the tag `broadcast_test` naming the
// broadcast. The emails are not the broadcast's: no `broadcast_id`, so its analytics and recipient
// lists never count them; no topic, so the tester receives it whatever their choices. Suppressions
// and the team's sending limits apply as to any email.
import type { BroadcastRec, ContactRec } from '../store';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import { addressList } from '../sending/address';
import { commit, prepare, type Prepared } from '../sending/submit';
import { SignedLinks } from '../links/signed';
import { blankContact } from '../contacts';
import { propertyDefs } from '../contacts/properties';
import { emailFor, type BroadcastDeps } from './send';
import type { Recipient } from './placeholders';

/** Addresses a test goes to at most. */
export const MAX_TEST_RECIPIENTS = 5;
/** What a test email's subject starts with. */
export const TEST_SUBJECT_PREFIX = '[Test] ';
/** The tag a test email carries, its value the broadcast's id. */
export const TEST_TAG = 'broadcast_test';

/** The addresses of a test (1 to 5: the schema's), parsed; the same address twice is one. */
export function testRecipients(to: string | string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const a of addressList('to', to)) {
    if (seen.has(a.address.toLowerCase())) continue;
    seen.add(a.address.toLowerCase());
    out.push(a.address);
  }
  return out;
}

/**
 * Send the test of `b` to `to` (checked by `testRecipients`): one email each, committed together
 * (all or none). Only a draft is tested — a test comes before the real send, and what it shows
 * can still be changed; it needs `html` or `text`; its `from` domain must be verified (403, the
 * sending core's). Resolves to the emails made, in the order of `to`.
 */
export async function sendTest(svc: BroadcastDeps, b: BroadcastRec, to: string[]): Promise<{ id: string; to: string }[]> {
  const { store } = svc;
  if (b.status !== 'draft') throw errors.validation('Only draft broadcasts can be tested.');
  if (!b.html && !b.text) throw errors.validation('Missing `html` or `text` field.');
  const team = b.team_id;
  const links = new SignedLinks(store.secret('links'), svc.config.public_url);
  const properties = await propertyDefs(store, team);
  const prepared: Prepared[] = [];
  for (const address of to) {
    // The team's contact with this address, else a stand-in with only the address (not stored):
    // its placeholders take their fallbacks, and its unsubscribe link names no contact.
    const known: ContactRec | undefined = await store.contacts.find('email', address.toLowerCase(), team);
    const contact = known ?? blankContact(team, address, nowIso());
    // The link names no email: unsubscribing from a test counts in no metric.
    const r: Recipient = { contact, properties, unsubscribeUrl: links.unsubscribeUrl({ team, contact: contact.id }) };
    const input = emailFor(b, r);
    prepared.push(
      await prepare(
        svc,
        { team, key: null, contactId: known?.id ?? null, emailId: newId() },
        {
          ...input,
          to: address,
          subject: `${TEST_SUBJECT_PREFIX}${input.subject}`,
          topic_id: null,
          tags: [{ name: TEST_TAG, value: b.id }],
        },
      ),
    );
  }
  const emails = await commit(svc, prepared);
  return emails.map((e) => ({ id: e.id, to: e.to[0]! }));
}
