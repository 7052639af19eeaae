// Contact imports: the dialog that uploads a CSV file and follows its progress, and the list of
// past imports with their counts (docs/api.md §12.9).
import { useState } from 'preact/hooks';
import type { ContactImport } from '../../../src/schemas/contact-imports';
import type { SegmentSummary } from '../../../src/schemas/segments';
import { get, post, url } from '../api';
import { Badge, Dialog, Empty, ErrorBox, Field, Form, PagedTable, Time, num, useAction, usePaged, val } from '../ui';
import { useLive } from '../live';

const STATUS_BADGE: Record<ContactImport['status'], string> = { queued: 'queued', in_progress: 'pending', completed: 'enabled', failed: 'failed' };

function ImportStatus({ i }: { i: ContactImport }) {
  return <Badge value={STATUS_BADGE[i.status]} label={i.status.replace('_', ' ')} />;
}

function Counts({ i }: { i: ContactImport }) {
  const c = i.counts;
  return (
    <span>
      {num(c.created)} created · {num(c.updated)} updated · {num(c.skipped)} skipped · {num(c.failed)} failed
    </span>
  );
}

/** How far an import got, as a progress bar (bytes of the file read). */
function Progress({ i }: { i: ContactImport }) {
  const { processed_bytes, file_bytes } = i.progress;
  return (
    <progress max={Math.max(1, file_bytes)} value={processed_bytes} aria-label="Import progress">
      {Math.round((100 * processed_bytes) / Math.max(1, file_bytes))}%
    </progress>
  );
}

export function ImportDialog({ open, onClose, onDone, segments }: { open: boolean; onClose: () => void; onDone: () => void; segments: SegmentSummary[] }) {
  const [file, setFile] = useState<File | null>(null);
  const [form, setForm] = useState({ on_conflict: 'skip', segment: '' });
  const [running, setRunning] = useState<ContactImport | null>(null);
  const start = useAction(async () => {
    const body = new FormData();
    body.append('file', file!);
    body.append('on_conflict', form.on_conflict);
    if (form.segment) body.append('segments', JSON.stringify([{ id: form.segment }]));
    const { id } = await post('/contacts/imports', body);
    setRunning(await get(url('/contacts/imports/:id', { id })));
  });
  // Follow the import until it is over: its progress arrives on the live stream.
  useLive(
    ['import'],
    async () => {
      if (running && running.status !== 'completed' && running.status !== 'failed') setRunning(await get(url('/contacts/imports/:id', { id: running.id })));
    },
    running?.id ?? null,
  );
  const close = () => {
    if (running) onDone();
    setRunning(null);
    setFile(null);
    onClose();
  };
  return (
    <Dialog open={open} title="Import contacts from a CSV file" onClose={close}>
      {running ? (
        <div class="import-progress" aria-live="polite">
          <p>
            <ImportStatus i={running} /> {num(running.counts.total)} rows read
          </p>
          <Progress i={running} />
          <p>
            <Counts i={running} />
          </p>
          {running.failure_reason && <ErrorBox error={{ message: running.failure_reason }} />}
          {running.failures.length > 0 && (
            <details>
              <summary>Failed rows</summary>
              <ul class="plain small">
                {running.failures.map((f) => (
                  <li>
                    Row {f.row}: {f.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
          <div class="form-actions">
            <button type="button" class="btn primary" onClick={close}>
              {running.status === 'completed' || running.status === 'failed' ? 'Done' : 'Close (it goes on)'}
            </button>
          </div>
        </div>
      ) : (
        <Form action={start}>
          <Field id="i-file" label="CSV file" hint="Up to 50 MB. The first row names the columns: email, first_name, last_name, unsubscribed.">
            <input id="i-file" type="file" accept=".csv,text/csv" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
          </Field>
          <div class="two">
            <Field id="i-conflict" label="Contacts that exist already">
              <select id="i-conflict" value={form.on_conflict} onChange={(e) => setForm({ ...form, on_conflict: val(e) })}>
                <option value="skip">Leave them as they are</option>
                <option value="upsert">Update them from the file</option>
              </select>
            </Field>
            <Field id="i-segment" label="Add to a segment (optional)">
              <select id="i-segment" value={form.segment} onChange={(e) => setForm({ ...form, segment: val(e) })}>
                <option value="">None</option>
                {segments.map((s) => (
                  <option value={s.id}>{s.name}</option>
                ))}
              </select>
            </Field>
          </div>
          <div class="form-actions">
            <button type="button" class="btn" onClick={close}>
              Cancel
            </button>
            <button type="submit" class="btn primary" disabled={start.busy || !file}>
              Import
            </button>
          </div>
        </Form>
      )}
    </Dialog>
  );
}

export function Imports() {
  const paged = usePaged('/contacts/imports');
  useLive(['import'], paged.reload);
  return (
    <PagedTable
      paged={paged}
      caption="Contact imports"
      empty={<Empty title="No imports yet.">Import contacts from a CSV file on the Contacts tab.</Empty>}
      columns={[
        { label: 'Started', render: (i) => <Time iso={i.created_at} /> },
        { label: 'Status', render: (i) => <ImportStatus i={i} /> },
        { label: 'Progress', render: (i) => <Progress i={i} /> },
        { label: 'Rows', render: (i) => (i.failure_reason ? <span class="muted">{i.failure_reason}</span> : <Counts i={i} />) },
      ]}
    />
  );
}
