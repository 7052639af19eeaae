// Contact imports (docs/api.md §12.9): POST /contacts/imports takes a multipart/form-data upload —
// the CSV in the `file` part, `column_map`, `segments` and `topics` as JSON strings, `on_conflict`
// — and answers 201 once the file and the import are durable; the rows are processed in the
// background (src/imports). The body is streamed (`body: 'stream'`): @fastify/busboy
// splits the parts and the file goes straight to disk, so memory holds only what is in transit.
import { Readable } from 'node:stream';
import Busboy from '@fastify/busboy';
import type { ApiContext } from '../app';
import type { ContactImportRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId } from '../../ids';
import { createImport, importOptions, MAX_IMPORT_BYTES } from '../../imports';
import { resource, route } from '../platform/route';
import { validate } from '../../schemas/validate';
import { List, Ref, UuidParams } from '../../schemas/common';
import { ContactImport, ImportForm, ImportListQuery } from '../../schemas/contact-imports';
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

/** The form's JSON-encoded fields decoded (`on_conflict` is a plain word), to be checked as `ImportForm`. */
function decodedForm(fields: Map<string, string>): Record<string, unknown> {
  const form: Record<string, unknown> = {};
  for (const name of ['column_map', 'segments', 'topics']) {
    const text = fields.get(name);
    if (text === undefined) continue;
    try {
      form[name] = JSON.parse(text);
    } catch {
      throw errors.invalidField(name, 'must be a JSON-encoded string.');
    }
  }
  if (fields.has('on_conflict')) form.on_conflict = fields.get('on_conflict');
  return form;
}

const importView = (i: ContactImportRec): ContactImport => ({
  object: 'contact_import',
  id: i.id,
  status: i.status,
  created_at: i.created_at,
  completed_at: i.completed_at,
  counts: i.counts,
  progress: { processed_bytes: i.cursor.offset, file_bytes: i.file_size },
  failures: i.failures,
  failure_reason: i.failure_reason,
});

export const contactImportsResource = resource('Contacts', (svc: ApiContext) => {
  const { store } = svc;
  return [
    route({
      method: 'POST',
      path: '/contacts/imports',
      summary: 'Import contacts from a CSV file (multipart/form-data)',
      description:
        'The CSV in the `file` part (at most 50 MB); `column_map`, `segments` and `topics` as JSON strings; `on_conflict` `skip` (default) or `upsert` (docs/api.md §12.9).',
      access: 'team',
      body: 'stream',
      status: 201,
      response: Ref('contact_import'),
      async handler({ caller, request }) {
        const { team } = caller;
        if (!/^multipart\/form-data\b/i.test(request.headers.get('content-type') ?? '') || !request.body)
          throw errors.badJson('The request body must be multipart/form-data, with the CSV file in a `file` part.');
        const declared = Number(request.headers.get('content-length') ?? 0);
        if (declared > MAX_IMPORT_BYTES + 2 * MAX_FIELD_BYTES) throw errors.tooLarge();
        const id = newId();
        try {
          const { fields, size } = await readForm(svc, request, team, id);
          if (size === undefined) throw errors.missingField('file');
          if (size === null) throw errors.validation('The file is larger than 50 MB.', 413);
          await createImport(store, team, id, size, importOptions(validate(ImportForm, decodedForm(fields), 'body')));
        } catch (e) {
          // Nothing names the file: it goes (the import was not created).
          await store.importFiles.discard(team, id);
          throw e;
        }
        svc.imports.start(team, id);
        return { object: 'contact_import' as const, id };
      },
    }),
    route({
      method: 'GET',
      path: '/contacts/imports',
      summary: 'List contact imports (optionally by status)',
      access: 'team',
      query: ImportListQuery,
      body: 'none',
      response: List(ContactImport),
      async handler({ caller, query }) {
        const { status } = query;
        return listOf(
          await store.contactImports.page(caller.team, pageQuery(query), 20, (i) => (status === undefined || i.status === status ? importView(i) : undefined)),
        );
      },
    }),
    route({
      method: 'GET',
      path: '/contacts/imports/:id',
      summary: 'Retrieve a contact import',
      access: 'team',
      params: UuidParams('id'),
      body: 'none',
      response: ContactImport,
      async handler({ caller, params }) {
        const imp = await store.contactImports.get(caller.team, params.id);
        if (!imp) throw errors.notFound('Contact import');
        return importView(imp);
      },
    }),
  ];
});
