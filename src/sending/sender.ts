// The sending-domain rule (docs/api.md §7.1, §13.3): mail leaves only from a domain the team
// registered and verified for sending. Shared by emails, batch, SMTP and broadcasts.
import type { StoreReader, DomainRec } from '../store';
import { errors } from '../errors';
import { canSendFrom } from '../domains/records';
import type { Address } from '../mail/address';

/** The team's domain `from` may be sent from; throws 403 validation_error otherwise. */
export async function sendingDomain(store: StoreReader, team: string, from: Address): Promise<DomainRec> {
  const d = await store.domains.find('name', from.domain);
  if (!d || d.team_id !== team || !canSendFrom(d))
    throw errors.validation(`The \`${from.domain}\` domain is not verified. Please, add and verify your domain.`, 403);
  return d;
}
