// Broadcasts: the list; a draft's editor with a live preview, its segment, send now or schedule;
// a sent broadcast's results (GET /emails/metrics, recipients, clicked links).
import { useEffect, useState, useMemo } from 'preact/hooks';
import type { Broadcast, BroadcastRecipient } from '../../../src/schemas/broadcasts';
import { del, patch, post, url, page } from '../api';
import { navigate } from '../router';
import {
  Badge,
  Card,
  Empty,
  ErrorBox,
  Field,
  FormDialog,
  KeyValue,
  Loading,
  notify,
  num,
  PagedTable,
  PageHeader,
  pct,
  Section,
  Table,
  Tabs,
  Time,
  useAction,
  useGet,
  usePaged,
  val,
  type InputEvent,
} from '../ui';
import { EmailPreview } from './preview';

function useSegments(active = true) {
  return useGet(active ? '/segments' : null);
}

export function BroadcastsPage() {
  const paged = usePaged('/broadcasts');
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title="Broadcasts"
        description="One email to every subscribed contact of a segment."
        actions={
          <button type="button" class="btn primary" onClick={() => setCreating(true)}>
            New broadcast
          </button>
        }
      />
      <PagedTable
        paged={paged}
        caption="Broadcasts"
        href={(b) => page`/dashboard/broadcasts/${b.id}`}
        empty={
          <Empty
            title="No broadcasts yet."
            action={
              <button type="button" class="btn primary" onClick={() => setCreating(true)}>
                Create a broadcast
              </button>
            }
          >
            A broadcast needs a segment of contacts (see Audiences) and a verified domain to send from.
          </Empty>
        }
        columns={[
          // A list item has no subject (docs/api.md §13.1): a broadcast without a name reads untitled.
          { label: 'Name', render: (b) => <strong>{b.name || '(untitled)'}</strong> },
          { label: 'Status', render: (b) => <Badge value={b.status} /> },
          { label: 'Created', render: (b) => <Time iso={b.created_at} /> },
          { label: 'Sent', render: (b) => <Time iso={b.sent_at ?? b.scheduled_at} /> },
        ]}
      />
      <CreateDialog open={creating} onClose={() => setCreating(false)} />
    </>
  );
}

function CreateDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const segments = useSegments(open);
  const [form, setForm] = useState({ name: '', segment_id: '', from: '', subject: '' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const action = useAction(async () => {
    const b = await post('/broadcasts', {
      ...form,
      html: '<p>Hello {{{contact.first_name|there}}},</p>\n<p></p>\n<p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
    });
    onClose();
    navigate(page`/dashboard/broadcasts/${b.id}`);
  });
  return (
    <FormDialog open={open} title="New broadcast" onClose={onClose} action={action} submit="Create draft">
      <Field id="b-name" label="Name" hint="Only you see it.">
        <input id="b-name" value={form.name} onInput={set('name')} />
      </Field>
      <Field id="b-segment" label="Segment">
        <select id="b-segment" required value={form.segment_id} onChange={set('segment_id')}>
          <option value="">Choose a segment…</option>
          {(segments.data?.data ?? []).map((s) => (
            <option value={s.id}>{s.name}</option>
          ))}
        </select>
      </Field>
      {segments.data && !segments.data.data.length && (
        <p class="callout">
          No segment yet: <a href="/dashboard/audiences">create one in Audiences</a>.
        </p>
      )}
      <Field id="b-from" label="From">
        <input id="b-from" required placeholder="Acme <news@example.com>" value={form.from} onInput={set('from')} />
      </Field>
      <Field id="b-subject" label="Subject">
        <input id="b-subject" required value={form.subject} onInput={set('subject')} />
      </Field>
    </FormDialog>
  );
}

export function BroadcastPage({ id }: { id: string }) {
  const b = useGet(url('/broadcasts/:id', { id }));
  if (b.error) return <ErrorBox error={b.error} />;
  if (!b.data) return <Loading />;
  return b.data.status === 'draft' ? <Editor b={b.data} reload={b.reload} /> : <Results b={b.data} reload={b.reload} />;
}

function Editor({ b, reload }: { b: Broadcast; reload: () => void }) {
  const segments = useSegments();
  const [form, setForm] = useState({
    name: b.name ?? '',
    segment_id: b.segment_id,
    from: b.from,
    subject: b.subject,
    preview_text: b.preview_text ?? '',
    html: b.html ?? '',
  });
  const [when, setWhen] = useState('');
  const [dirty, setDirty] = useState(false);
  useEffect(() => setDirty(true), [form]);
  useEffect(() => setDirty(false), []);
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const save = useAction(async () => {
    await patch(url('/broadcasts/:id', { id: b.id }), { ...form, preview_text: form.preview_text || undefined });
    setDirty(false);
    notify('Draft saved.');
  });
  const send = useAction(async () => {
    if (dirty) await patch(url('/broadcasts/:id', { id: b.id }), { ...form, preview_text: form.preview_text || undefined });
    await post(url('/broadcasts/:id/send', { id: b.id }), when ? { scheduled_at: new Date(when).toISOString() } : {});
    notify(when ? 'Broadcast scheduled.' : 'Broadcast is being sent.');
    reload();
  });
  const remove = useAction(async () => {
    await del(url('/broadcasts/:id', { id: b.id }));
    navigate('/dashboard/broadcasts');
  });
  return (
    <>
      <PageHeader
        back={{ href: '/dashboard/broadcasts', label: 'Broadcasts' }}
        title={form.name || form.subject || 'Untitled broadcast'}
        description={<Badge value="draft" />}
        actions={
          <>
            <button type="button" class="btn danger ghost" onClick={() => confirm('Delete this draft?') && remove.run()}>
              Delete
            </button>
            <button type="button" class="btn" disabled={save.busy} onClick={() => save.run()}>
              {dirty ? 'Save draft' : 'Saved'}
            </button>
          </>
        }
      />
      <ErrorBox error={save.error ?? send.error ?? remove.error} />
      <div class="editor">
        <Card>
          <Field id="e-name" label="Name">
            <input id="e-name" value={form.name} onInput={set('name')} />
          </Field>
          <Field id="e-segment" label="Segment">
            <select id="e-segment" value={form.segment_id} onChange={set('segment_id')}>
              {(segments.data?.data ?? []).map((s) => (
                <option value={s.id}>{s.name}</option>
              ))}
            </select>
          </Field>
          <Field id="e-from" label="From">
            <input id="e-from" value={form.from} onInput={set('from')} />
          </Field>
          <Field id="e-subject" label="Subject">
            <input id="e-subject" value={form.subject} onInput={set('subject')} />
          </Field>
          <Field id="e-preview" label="Preview text" hint="Shown after the subject in most inboxes.">
            <input id="e-preview" value={form.preview_text} onInput={set('preview_text')} aria-describedby="e-preview-hint" />
          </Field>
          <Field id="e-html" label="HTML" hint="Placeholders: {{{contact.first_name|fallback}}}, {{{contact.email}}}, {{{RESEND_UNSUBSCRIBE_URL}}}.">
            <textarea id="e-html" class="mono" rows={14} value={form.html} onInput={set('html')} aria-describedby="e-html-hint" />
          </Field>
          <div class="send-row">
            <Field id="e-when" label="Schedule (optional)" hint="Leave empty to send now.">
              <input id="e-when" type="datetime-local" value={when} onInput={(e) => setWhen(val(e))} aria-describedby="e-when-hint" />
            </Field>
            <button
              type="button"
              class="btn primary"
              disabled={send.busy}
              onClick={() => confirm(when ? 'Schedule this broadcast?' : 'Send this broadcast to every subscribed contact of the segment now?') && send.run()}
            >
              {when ? 'Schedule' : 'Send now'}
            </button>
          </div>
        </Card>
        <Card class="live-preview">
          <h2 class="card-title">Preview</h2>
          <p class="small">
            <strong>{form.subject || '(no subject)'}</strong>
            <span class="muted"> — {form.preview_text}</span>
          </p>
          <EmailPreview html={form.html} height={560} />
        </Card>
      </div>
    </>
  );
}

const TYPES = ['delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'];

function Results({ b, reload }: { b: Broadcast; reload: () => void }) {
  // The period is fixed when the results open: a clock read on every render made a new URL, so every
  // answer asked again, hundreds of times a second (issue 34). `reload` asks for the same period.
  const period = useMemo(() => {
    const now = Date.now();
    return {
      start_date: new Date(Math.max(Date.parse(b.created_at) - 86_400_000, now - 399 * 86_400_000)).toISOString(),
      end_date: new Date(now).toISOString(),
    };
  }, [b.created_at]);
  const metrics = useGet(url('/emails/metrics', { broadcast_id: b.id, ...period }));
  const links = useGet(url('/broadcasts/:id/clicked-links', { id: b.id, limit: 50 }));
  const [type, setType] = useState('delivered');
  const recipients = useGet(url('/broadcasts/:id/recipients', { id: b.id, type, limit: 50 }));
  const cancel = useAction(async () => {
    await post(url('/broadcasts/:id/cancel', { id: b.id }));
    reload();
  });
  const t = metrics.data?.totals ?? {};
  return (
    <>
      <PageHeader
        back={{ href: '/dashboard/broadcasts', label: 'Broadcasts' }}
        title={b.name || b.subject}
        description={
          <>
            <Badge value={b.status} />{' '}
            {b.status === 'scheduled' && (
              <span class="muted">
                for <Time iso={b.scheduled_at} exact />
              </span>
            )}
            {b.sent_at && (
              <span class="muted">
                sent <Time iso={b.sent_at} exact />
              </span>
            )}
          </>
        }
        actions={
          <>
            {b.status === 'scheduled' && (
              <button type="button" class="btn" onClick={() => cancel.run()}>
                Cancel schedule
              </button>
            )}
            <button
              type="button"
              class="btn"
              onClick={async () => {
                const d = await post(url('/broadcasts/:id/duplicate', { id: b.id }));
                navigate(page`/dashboard/broadcasts/${d.id}`);
              }}
            >
              Duplicate
            </button>
          </>
        }
      />
      <ErrorBox error={cancel.error} />
      {b.status === 'queued' && (
        <p class="callout" role="status">
          Sending: recipient emails are being created.{' '}
          <button type="button" class="btn small" onClick={reload}>
            Refresh
          </button>
        </p>
      )}
      <div class="stats">
        <div class="stat">
          <span class="stat-label">Sent</span>
          <span class="stat-value">{num(t.sent)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Delivered</span>
          <span class="stat-value">{num(t.delivered)}</span>
          <span class="stat-sub muted">{pct(t.delivery_rate)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Opened</span>
          <span class="stat-value">{num(t.unique_opened)}</span>
          <span class="stat-sub muted">{pct(t.open_rate)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Clicked</span>
          <span class="stat-value">{num(t.unique_clicked)}</span>
          <span class="stat-sub muted">{pct(t.click_rate)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Bounced</span>
          <span class="stat-value">{num(t.bounced)}</span>
          <span class="stat-sub muted">{pct(t.bounce_rate)}</span>
        </div>
        <div class="stat">
          <span class="stat-label">Unsubscribed</span>
          <span class="stat-value">{num(t.unsubscribed)}</span>
          <span class="stat-sub muted">{pct(t.unsubscribe_rate)}</span>
        </div>
      </div>
      <div class="detail-grid">
        <div class="detail-main">
          <Section title="Recipients">
            <Tabs
              label="Recipients by outcome"
              current={type}
              onChange={setType}
              tabs={TYPES.map((x) => ({ id: x, label: x[0].toUpperCase() + x.slice(1) }))}
            />
            <div role="tabpanel" aria-labelledby={`tab-${type}`} class="tab-panel">
              {recipients.error && <ErrorBox error={recipients.error} />}
              {recipients.data && !recipients.data.data.length && (
                <p class="muted">No recipient {type === 'delivered' ? 'has been delivered to' : `has ${type}`} yet.</p>
              )}
              {recipients.data && recipients.data.data.length > 0 && (
                <Table
                  caption={`Recipients: ${type}`}
                  rows={recipients.data.data}
                  href={(r) => page`/dashboard/emails/${r.id}`}
                  columns={[
                    { label: 'Email', render: (r) => r.email },
                    ...(type === 'opened' || type === 'clicked' ? [{ label: 'Count', render: (r: BroadcastRecipient) => num(r.count), class: 'num' }] : []),
                    ...(type === 'bounced' ? [{ label: 'Bounce', render: (r: BroadcastRecipient) => <Badge value="bounced" label={r.bounce_type} /> }] : []),
                  ]}
                />
              )}
            </div>
          </Section>
        </div>
        <aside class="detail-side">
          <Card>
            <h2 class="card-title">Clicked links</h2>
            {links.data && !links.data.data.length && <p class="muted">No clicks yet.</p>}
            <ul class="plain links">
              {(links.data?.data ?? []).map((l) => (
                <li>
                  <span class="mono small break">{l.url}</span>
                  <span class="muted small">
                    {num(l.clicks)} clicks · {num(l.unique_clicks)} unique
                  </span>
                </li>
              ))}
            </ul>
          </Card>
          <Card>
            <KeyValue
              rows={[
                ['From', b.from],
                ['Subject', b.subject],
                ['Segment', <span class="mono small">{b.segment_id}</span>],
                ['Created', <Time iso={b.created_at} exact />],
              ]}
            />
          </Card>
        </aside>
      </div>
    </>
  );
}
