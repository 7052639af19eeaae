// GET /.well-known/acme-challenge/{token} (RFC 8555 §8.3, docs/mail.md §4, "Certificates by ACME"): the key
// authorization of an HTTP-01 challenge Posthorn's ACME client is answering, read from the store so
// that whichever cluster node the CA reaches answers it. Public: the CA has no key; a token not
// being answered is a 404.
import type { ApiContext } from '../app';
import { ACME_TEAM, type AcmeChallengeRec } from '../../store';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { AcmeChallengeParams } from '../../schemas/acme';
import { challengeId } from '../../acme/names';

export const acmeResource = resource('ACME', (svc: ApiContext) => [
  route({
    method: 'GET',
    path: '/.well-known/acme-challenge/:token',
    summary: 'ACME HTTP-01 challenge answer',
    access: 'public',
    params: AcmeChallengeParams,
    body: 'none',
    response: { raw: 'application/octet-stream', description: 'The key authorization (RFC 8555 §8.3)' },
    async handler({ params }) {
      const rec = (await svc.store.acme.get(ACME_TEAM, challengeId(params.token))) as AcmeChallengeRec | undefined;
      if (rec?.kind !== 'challenge') throw errors.notFound('Challenge');
      return new Response(rec.key_authorization, { headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' } });
    },
  }),
]);
