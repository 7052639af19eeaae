// What the typed requests of api.ts refuse, checked by `npm run typecheck` (this file is bundled by
// nothing: main.tsx does not import it). Each `@ts-expect-error` fails the check if its line compiles.
import type { Email } from '../../src/schemas/emails';
import { del, get, post, url } from './api';

export async function refused(id: string): Promise<Email> {
  // @ts-expect-error: a route the map does not have.
  await get('/nowhere');
  // @ts-expect-error: a path with parameters goes through url().
  await get('/emails/:id');
  // @ts-expect-error: a path built by hand is not a route.
  await get(`/emails/${id}`);
  // @ts-expect-error: url() needs every parameter of the path.
  url('/emails/:id/events', { limit: 100 });
  // @ts-expect-error: the route exists for GET only.
  await post(url('/emails/:id', { id }));
  // @ts-expect-error: DELETE /emails/:id is no route.
  await del(url('/emails/:id', { id }));
  const email = await get(url('/emails/:id', { id }));
  // @ts-expect-error: the answer is the schema's type, which has no such field.
  email.recipients;
  return email;
}
