// Contact imports (docs/api.md §12.9): POST /contacts/imports takes a multipart/form-data upload —
// the CSV in the `file` part, `column_map`, `segments` and `topics` as JSON strings, `on_conflict`
// — and answers 201 once the file and the import are durable; the rows are processed in the
// background (src/imports). The body is streamed (app.ts leaves it to this route): @fastify/busboy
// splits the parts and the file goes straight to disk, so memory holds only what is in transit.
import { Readable } from 'node:stream';
import Busboy from '@fastify/busboy';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId } from '../../ids';
import { createImport, importOptions, importView, IMPORT_STATUSES, MAX_IMPORT_BYTES } from '../../imports';

const tags = ['Contacts'];
/** The form's other fields are short JSON strings. */
const MAX_FIELD_BYTES = 1024 * 1024;

/** Read the form: the file saved as the import's file (its size, null past the limit, undefined without one) and the fields. */
async function readForm(svc: ApiContext, request: Request, team: string, id: string) {
  const fields = new Map<string, string>();
  let saving: Promise<number | null> | undefined;
  let fieldTooLong: string | null = null;
  const bb = new Busboy({
    headers: { 'content-type': request.headers.get('content-type') ?? '' },
    // One byte over the limit tells a file of exactly 50 MB from a larger one.
    limits: { fileSize: MAX_IMPORT_BYTES + 1, files: 1, fields: 16, fieldSize: MAX_FIELD_BYTES, parts: 32 },
  });
  bb.on('file', (name, stream) => {
    // A broken body errors the part at once, maybe before the save reads it: the save sees it then.
    stream.on('error', () => {});
    if (name !== 'file' || saving) return void stream.resume();
    saving = svc.store.importFiles.save(team, id, stream, MAX_IMPORT_BYTES);
    // A failed save must not be an unhandled rejection before it is awaited below.
    saving.catch(() => {});
  });
  bb.on('field', (name, value, _nameTruncated, valueTruncated) => {
    if (valueTruncated) fieldTooLong = name;
    fields.set(name, value);
  });
  const parsed = new Promise<void>((resolve, reject) => {
    bb.on('finish', resolve);
    bb.on('error', reject);
  });
  const body = Readable.fromWeb(request.body as never);
  body.on('error', (e) => bb.destroy(e));
  body.pipe(bb);
  try {
    await parsed;
  } catch {
    await saving?.catch(() => null);
    throw errors.badJson('The multipart/form-data body is malformed.');
  }
  const size = saving && (await saving);
  if (fieldTooLong) throw errors.invalidField(fieldTooLong, 'is longer than 1 MB.');
  return { fields, size };
}

export function contactImportsRoutes(app: App, svc: ApiContext) {
  const { store } = svc;

  app.post(
    '/contacts/imports',
    async ({ request, set }) => {
      const { team } = caller(request);
      if (!/^multipart\/form-data\b/i.test(request.headers.get('content-type') ?? '') || !request.body)
        throw errors.badJson('The request body must be multipart/form-data, with the CSV file in a `file` part.');
      const declared = Number(request.headers.get('content-length') ?? 0);
      if (declared > MAX_IMPORT_BYTES + 2 * MAX_FIELD_BYTES) throw errors.tooLarge();
      const id = newId();
      try {
        const { fields, size } = await readForm(svc, request, team, id);
        if (size === undefined) throw errors.missingField('file');
        if (size === null) throw errors.validation('The file is larger than 50 MB.', 413);
        await createImport(store, team, id, size, importOptions(fields));
      } catch (e) {
        // Nothing names the file: it goes (the import was not created).
        await store.importFiles.discard(team, id);
        throw e;
      }
      svc.imports.start(team, id);
      set.status = 201;
      return { object: 'contact_import', id };
    },
    { detail: { summary: 'Import contacts from a CSV file (multipart/form-data)', tags } },
  );

  app.get(
    '/contacts/imports',
    async ({ request, query }) => {
      const q = pageQuery(query);
      const status = query.status;
      if (status !== undefined && !IMPORT_STATUSES.includes(status as never))
        throw errors.validation(`\`status\` must be one of ${IMPORT_STATUSES.join(', ')}.`);
      return listOf(
        await store.contactImports.page(caller(request).team, q, 20, (i) => (status === undefined || i.status === status ? importView(i) : undefined)),
      );
    },
    { detail: { summary: 'List contact imports (optionally by status)', tags } },
  );

  app.get(
    '/contacts/imports/:id',
    async ({ request, params }) => {
      const imp = await store.contactImports.get(caller(request).team, pathId(params.id));
      if (!imp) throw errors.notFound('Contact import');
      return importView(imp);
    },
    { detail: { summary: 'Retrieve a contact import', tags } },
  );
}
