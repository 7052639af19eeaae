// Broadcasts: the list; a draft's editor with a live preview, its segment, a test send (docs/api.md
// §13.7) and the review before sending (§13.6), send now or schedule; a sent broadcast's results (GET /emails/metrics, recipients,
// clicked links), and the cancel of one scheduled or being sent (§13.3).
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Broadcast, BroadcastRecipient } from '../../../src/schemas/broadcasts';
import type { BroadcastReview } from '../../../src/schemas/insights';
import { ApiFailure, del, page, patch, post, qs, url } from '../api';
import { navigate, setLeaveGuard } from '../router';
import { useAutosave } from '../editor/autosave';
import type { PlaceholderChoice } from '../editor/block-editor';
import { fillForContact } from '../editor/broadcast-preview';
import { type DocNode, emailHtml } from '../editor/email-html';
import { LazyBlockEditor } from '../editor/lazy';
import { ContentModeTabs, SourceNotice } from '../editor/content-mode';
import { blocksOf, starterDoc } from '../editor/mode';
import {
  Badge,
  Card,
  Dialog,
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
  ask,
  useLeaveWarning,
} from '../ui';
import { useLive } from '../live';
import { EmailPreview } from './preview';
import { InsightList, insightCounts, SpamScore } from './insights';
import { useCan } from '../role';

function useSegments(active = true) {
  return useGet(active ? '/segments' : null);
}

export function BroadcastsPage() {
  const paged = usePaged('/broadcasts');
  useLive(['broadcast'], paged.reload);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        need="member"
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
      html: emailHtml(starterDoc({ name: 'contact.first_name', fallback: 'there' })),
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

/** `me`: the signed-in user's address, where a test goes unless changed. */
export function BroadcastPage({ id, me }: { id: string; me: string }) {
  const b = useGet(url('/broadcasts/:id', { id }));
  useLive(['broadcast'], b.reload, id);
  if (b.error) return <ErrorBox error={b.error} />;
  if (!b.data) return <Loading />;
  return b.data.status === 'draft' ? <Editor b={b.data} reload={b.reload} me={me} /> : <Results b={b.data} reload={b.reload} />;
}

/** Addresses typed in one field, separated by commas, semicolons or spaces. */
const addresses = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

/**
 * Send a test of the draft (POST /broadcasts/{id}/test) to up to 5 addresses; `save` first writes
 * the editor's unsaved changes, so the test shows what the editor shows. The API's refusal (too
 * many addresses, a malformed one, an unverified domain) is shown in the dialog.
 */
function TestDialog({ b, me, open, onClose, save }: { b: Broadcast; me: string; open: boolean; onClose: () => void; save: () => Promise<void> }) {
  const [to, setTo] = useState(me);
  const action = useAction(async () => {
    await save();
    const sent = await post(url('/broadcasts/:id/test', { id: b.id }), { to: addresses(to) });
    notify(`Test sent to ${sent.emails.map((e) => e.to).join(', ')}.`);
    onClose();
  });
  return (
    <FormDialog open={open} title="Send a test email" onClose={onClose} action={action} submit="Send test">
      <p class="muted small">
        The broadcast as a contact with that address would get it, its subject starting with “[Test]”. Nobody in the segment receives it.
      </p>
      <Field id="t-to" label="To" hint="Up to 5 addresses, separated by commas.">
        <input id="t-to" required value={to} onInput={(e) => setTo(val(e))} aria-describedby="t-to-hint" />
      </Field>
    </FormDialog>
  );
}

/** The placeholders a broadcast fills per recipient (docs/api.md §13.4), offered by the editor's `/` menu. */
const BROADCAST_PLACEHOLDERS: PlaceholderChoice[] = [
  { name: 'contact.first_name', label: 'First name', fallback: 'there' },
  { name: 'contact.last_name', label: 'Last name' },
  { name: 'contact.email', label: 'Email address' },
];

function Editor({ b, reload, me }: { b: Broadcast; reload: () => void; me: string }) {
  const member = useCan('member');
  const segments = useSegments();
  const [form, setForm] = useState({
    name: b.name ?? '',
    segment_id: b.segment_id,
    from: b.from,
    subject: b.subject,
    preview_text: b.preview_text ?? '',
    html: b.html ?? '',
  });
  // Blocks when the HTML is the block editor's own (editor/mode.ts), else the HTML view.
  const [doc, setDoc] = useState<DocNode | null>(() => blocksOf(b.html));
  const [mode, setMode] = useState<'blocks' | 'source'>(doc ? 'blocks' : 'source');
  const [when, setWhen] = useState('');
  const [testing, setTesting] = useState(false);
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const onDoc = (d: DocNode) => {
    setDoc(d);
    setForm((f) => ({ ...f, html: emailHtml(d) }));
  };
  const autosave = useAutosave(form, (f) => patch(url('/broadcasts/:id', { id: b.id }), { ...f, preview_text: f.preview_text || undefined }).then(() => {}));
  useLeaveWarning(autosave.dirty);
  /** The editor's unsaved changes written to the draft (before a test or the send). */
  const saveChanges = autosave.flush;
  const save = useAction(async () => {
    await autosave.flush();
    notify('Draft saved.');
  });
  // Sending starts with the review (docs/api.md §13.6): one recipient's email, checked as it will
  // be sent, shown in a dialog that confirms the send — or, when the review holds the broadcast,
  // asks for the findings to be accepted first (POST /broadcasts/{id}/review with `accept`).
  const [review, setReview] = useState<BroadcastReview | null>(null);
  const reviewNow = (accept = false) => post(url('/broadcasts/:id/review', { id: b.id }), accept ? { accept } : {});
  const check = useAction(async () => {
    await saveChanges();
    const made = await reviewNow();
    send.setError(null);
    setReview(made);
  });
  const send = useAction(async () => {
    await saveChanges();
    if (review?.status === 'held') await reviewNow(true);
    try {
      await post(url('/broadcasts/:id/send', { id: b.id }), when ? { scheduled_at: new Date(when).toISOString() } : {});
    } catch (e) {
      // Reviewed again by the send and held this time (the content or rspamd's verdict changed): show that review.
      if (e instanceof ApiFailure && e.code === 'review_required') setReview(await reviewNow());
      throw e;
    }
    setReview(null);
    notify(when ? 'Broadcast scheduled.' : 'Broadcast is being sent.');
    reload();
  });
  const remove = useAction(async () => {
    await del(url('/broadcasts/:id', { id: b.id }));
    setLeaveGuard(null);
    navigate('/dashboard/broadcasts', { force: true });
  });
  const startBlocks = async () => {
    if (form.html.trim() && !(await ask('Start over with blocks? The HTML written by hand is replaced.', { confirm: 'Start over' }))) return;
    onDoc(starterDoc({ name: 'contact.first_name', fallback: 'there' }));
    setMode('blocks');
  };
  const [previewAs, setPreviewAs] = useState('');
  const contacts = useGet(url('/contacts', { segment_id: form.segment_id, limit: 20 }));
  const contact = (contacts.data?.data ?? []).find((c) => c.id === previewAs) ?? null;
  const status = { saved: 'All changes saved', unsaved: 'Unsaved changes', saving: 'Saving…', failed: 'Not saved' }[autosave.state];
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/broadcasts', label: 'Broadcasts' }}
        title={form.name || form.subject || 'Untitled broadcast'}
        description={
          <>
            <Badge value="draft" />{' '}
            <span class="muted small save-state" role="status">
              {status}
            </span>
          </>
        }
        actions={
          <>
            <button type="button" class="btn danger ghost" onClick={async () => (await ask('Delete this draft?', { confirm: 'Delete' })) && remove.run()}>
              Delete
            </button>
            <button type="button" class="btn" disabled={save.busy} onClick={() => save.run()}>
              {autosave.dirty ? 'Save draft' : 'Saved'}
            </button>
            <button type="button" class="btn" onClick={() => setTesting(true)}>
              Send test
            </button>
          </>
        }
      />
      <TestDialog b={b} me={me} open={testing} onClose={() => setTesting(false)} save={saveChanges} />
      <ErrorBox error={autosave.error ?? save.error ?? check.error ?? remove.error} />
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
          <ContentModeTabs mode={mode} hasDoc={!!doc} setMode={setMode} onStartBlocks={() => void startBlocks()} />
          <div role="tabpanel" aria-labelledby={`tab-${mode}`} class="tab-panel">
            {mode === 'blocks' && doc ? (
              <LazyBlockEditor doc={doc} onChange={onDoc} placeholders={BROADCAST_PLACEHOLDERS} label="Email content" />
            ) : (
              <>
                <SourceNotice fromBlocks={!!doc} onStartBlocks={() => void startBlocks()} />
                <Field id="e-html" label="HTML" hint="Placeholders: {{{contact.first_name|fallback}}}, {{{contact.email}}}, {{{RESEND_UNSUBSCRIBE_URL}}}.">
                  <textarea
                    id="e-html"
                    class="mono"
                    rows={14}
                    value={form.html}
                    onInput={(e) => {
                      setDoc(null);
                      set('html')(e);
                    }}
                    aria-describedby="e-html-hint"
                  />
                </Field>
              </>
            )}
          </div>
          <div class="send-row">
            <Field id="e-when" label="Schedule (optional)" hint="Leave empty to send now.">
              <input id="e-when" type="datetime-local" value={when} onInput={(e) => setWhen(val(e))} aria-describedby="e-when-hint" />
            </Field>
            <button type="button" class="btn primary" disabled={check.busy || !member} onClick={() => check.run()}>
              {check.busy ? 'Reviewing…' : when ? 'Schedule' : 'Send now'}
            </button>
          </div>
        </Card>
        <Card class="live-preview">
          <div class="row-between">
            <h2 class="card-title">Preview</h2>
            <label class="preview-as">
              <span class="small muted">As</span>
              <select aria-label="Preview as contact" value={previewAs} onChange={(e) => setPreviewAs(e.currentTarget.value)}>
                <option value="">placeholders</option>
                {(contacts.data?.data ?? []).map((c) => (
                  <option value={c.id}>{c.email}</option>
                ))}
              </select>
            </label>
          </div>
          <p class="small">
            <strong>{(previewAs ? fillForContact(form.subject, contact, 'text') : form.subject) || '(no subject)'}</strong>
            <span class="muted"> — {previewAs ? fillForContact(form.preview_text, contact, 'text') : form.preview_text}</span>
          </p>
          <EmailPreview html={previewAs ? fillForContact(form.html, contact, 'html') : form.html} height={560} />
        </Card>
      </div>
      <ReviewDialog review={review} when={when} send={send} onClose={() => setReview(null)} />
    </>
  );
}

/**
 * The review before a broadcast goes out: what holds it, its spam score and insights. A review that
 * passes confirms the send; one that holds it needs the findings accepted, ticked explicitly.
 */
function ReviewDialog({
  review,
  when,
  send,
  onClose,
}: {
  review: BroadcastReview | null;
  when: string;
  send: { run: () => unknown; busy: boolean; error: { message: string } | null };
  onClose: () => void;
}) {
  const held = review?.status === 'held';
  const verb = when ? 'schedule' : 'send';
  const [accepted, setAccepted] = useState(false);
  // A new review is read anew: nothing is accepted in advance.
  useEffect(() => setAccepted(false), [review]);
  return (
    <Dialog open={!!review} title="Review before sending" wide onClose={onClose}>
      {review && (
        <>
          <ErrorBox error={send.error} />
          {held ? (
            <div class="callout warning review-status" role="status">
              <p>
                <strong>Held for review.</strong> Fix the broadcast, or accept these findings and {verb} it all the same:
              </p>
              <ul class="findings">
                {review.findings.map((f) => (
                  <li>{f}</li>
                ))}
              </ul>
            </div>
          ) : (
            <div class="callout success review-status" role="status">
              <p>
                <strong>Nothing holds this broadcast.</strong> {insightCounts(review.insights)}.
              </p>
            </div>
          )}
          <p class="small muted">
            Checked on the email to <span class="mono">{review.sample.to}</span>
            {review.sample.contact_id ? ', the first contact who receives it' : ' (a stand-in: nobody in the segment receives it yet)'}; held at a spam score of{' '}
            {review.threshold} or more.
          </p>
          <SpamScore spam={review.spam} insights={review.insights} />
          <InsightList insights={review.insights} spam={review.spam} />
          {/* Kept in view while the insights scroll by. */}
          <div class="dialog-foot">
            {held && (
              <label class="check accept">
                <input type="checkbox" checked={accepted} onChange={(e) => setAccepted(e.currentTarget.checked)} /> I have read the findings; {verb} this
                broadcast anyway
              </label>
            )}
            <div class="form-actions">
              <button type="button" class="btn" onClick={onClose}>
                Cancel
              </button>
              <button type="button" class={held ? 'btn danger solid' : 'btn primary'} disabled={send.busy || (held && !accepted)} onClick={() => send.run()}>
                {held ? `Accept and ${verb}` : when ? 'Schedule' : 'Send now'}
              </button>
            </div>
          </div>
        </>
      )}
    </Dialog>
  );
}

const TYPES = ['delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed', 'suppressed'];

function Results({ b, reload }: { b: Broadcast; reload: () => void }) {
  // The range is fixed when the broadcast is (re)loaded: a new `end_date` at every render would be a
  // new URL, fetched again, rendered again — requests without end.
  const range = useMemo(
    () => ({
      start_date: new Date(Math.max(Date.parse(b.created_at) - 86_400_000, Date.now() - 399 * 86_400_000)).toISOString(),
      end_date: new Date().toISOString(),
    }),
    [b],
  );
  const metrics = useGet(url('/emails/metrics', { broadcast_id: b.id, ...range }));
  const links = useGet(url('/broadcasts/:id/clicked-links', { id: b.id, limit: 50 }));
  const [type, setType] = useState('delivered');
  const recipients = useGet(url('/broadcasts/:id/recipients', { id: b.id, type, limit: 50 }));
  const cancel = useAction(async () => {
    const r = await post(url('/broadcasts/:id/cancel', { id: b.id }));
    // Stopped while sending: the answer counts its emails (docs/api.md §13.3).
    if (r.status === 'canceled') notify(`Sending canceled: ${num(r.canceled)} queued emails canceled, ${num(r.sent)} had already gone out.`);
    reload();
  });
  const t = metrics.data?.totals ?? {};
  return (
    <>
      <PageHeader
        need="member"
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
            {b.delivery_forecast && (
              <span class="muted">
                {' '}
                · {num(b.delivery_forecast.pending)} waiting on sending IP warm-up, all gone by about <Time iso={b.delivery_forecast.completes_at} exact />
              </span>
            )}
          </>
        }
        actions={
          <>
            {b.status === 'scheduled' && (
              <button type="button" class="btn" disabled={cancel.busy} onClick={() => cancel.run()}>
                Cancel schedule
              </button>
            )}
            {b.status === 'queued' && (
              <button
                type="button"
                class="btn danger"
                disabled={cancel.busy}
                onClick={async () =>
                  (await ask('Stop sending this broadcast? Contacts not reached yet get nothing; emails already sent are not affected.', {
                    confirm: 'Stop sending',
                  })) && cancel.run()
                }
              >
                Cancel sending
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
      {b.status === 'canceled' && (
        <p class="callout" role="status">
          Sending was canceled: contacts not reached by then got nothing, and emails still queued were canceled. Duplicate the broadcast to send it again.
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
                ['Segment', <SegmentName id={b.segment_id} />],
                ['Created', <Time iso={b.created_at} exact />],
              ]}
            />
          </Card>
        </aside>
      </div>
    </>
  );
}

/** A segment by name, linked to its contacts; an id whose segment is gone, as such. */
function SegmentName({ id }: { id: string | null }) {
  const segments = useSegments(!!id);
  if (!id) return <span class="muted">—</span>;
  if (!segments.data) return <span class="muted">…</span>;
  const s = segments.data.data.find((x) => x.id === id);
  if (!s) return <span class="mono small">{id} (deleted)</span>;
  return <a href={`/dashboard/audiences${qs({ segment: id })}`}>{s.name}</a>;
}
