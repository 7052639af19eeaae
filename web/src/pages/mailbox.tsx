// An inbox as a support team works it (docs/api.md §25): folders and labels on the left, the
// conversations of one folder or label — or of a search (GET …/threads/search) — in the middle,
// the open conversation on the right. The query holds the view (`folder`, `label`, `q`, `thread`),
// so back, reload and a shared link land on it; on a phone the list and the conversation are
// separate views, opening a conversation being a step the back button undoes.
// Keyboard: j/k next and previous conversation, r reply, f forward, e archive, # trash, u back to
// the list, / search, ? the list of shortcuts.
import { useEffect, useRef, useState } from 'preact/hooks';
import { del, get, page, patch, url } from '../api';
import { navigate, useLocation } from '../router';
import { useLive } from '../live';
import { useCan } from '../role';
import { ask, Dialog, Empty, ErrorBox, Loading, notify, PageHeader, Pager, Time, useAction, useGet, usePaged, type Paged, val } from '../ui';
import type { InboxDraftListItem, InboxThread, InboxThreadSearchResult } from '../../../src/schemas/inboxes';
import { FOLDER_NAMES, FOLDERS, type Folder } from './inbox-data';
import { inboxName, Swatch } from './inboxes';
import { LabelChips, Paperclip, personName, ThreadView } from './inbox-thread';
import { type Compose, Composer } from './inbox-composer';

const SHORTCUTS: [string, string][] = [
  ['j', 'Next conversation'],
  ['k', 'Previous conversation'],
  ['r', 'Reply'],
  ['f', 'Forward'],
  ['e', 'Archive'],
  ['#', 'Move to trash'],
  ['u', 'Back to the list'],
  ['/', 'Search'],
  ['?', 'Show these shortcuts'],
];

/** This page with `changes` made to its query (null removes a key); a list change drops the cursor. */
function withQuery(changes: Record<string, string | null>): string {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  return `${location.pathname}${s ? `?${s}` : ''}`;
}
const listView = (changes: Record<string, string | null>) => withQuery({ after: null, before: null, thread: null, ...changes });

/** A key pressed for the page, not typed into a field or meant for a dialog or the browser. */
function isShortcut(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return false;
  const t = e.target as HTMLElement | null;
  if (t?.closest('input, textarea, select, [contenteditable], dialog')) return false;
  return !document.querySelector('dialog[open]');
}

export function MailboxPage({ id }: { id: string }) {
  const { query } = useLocation();
  const folder = (query.get('folder') as Folder | null) ?? (query.get('label') || query.get('q') ? null : 'inbox');
  const label = query.get('label');
  const q = query.get('q');
  const thread = query.get('thread');
  const drafts = query.get('view') === 'drafts';
  const unreadOnly = query.get('unread') === '1';
  const member = useCan('member');

  const inbox = useGet(url('/inboxes/:inbox', { inbox: id }));
  const inboxes = useGet(url('/inboxes', { limit: 100 }));
  const labels = useGet(url('/inboxes/:inbox/labels', { inbox: id }));
  const list = usePaged(
    q ? url('/inboxes/:inbox/threads/search', { inbox: id }) : url('/inboxes/:inbox/threads', { inbox: id }),
    { ...(q ? { query: q } : { folders: folder }), labels: label, read: unreadOnly ? 'false' : null },
    25,
  );
  const [compose, setCompose] = useState<Compose | null>(null);
  const [help, setHelp] = useState(false);
  const search = useRef<HTMLInputElement>(null);

  const rows = list.rows;
  const current = rows.findIndex((r) => r.id === thread);
  const open = (t: string | null) => navigate(withQuery({ thread: t }));
  const [draftsVersion, setDraftsVersion] = useState(0);
  const reloadAll = () => {
    list.reload();
    inbox.reload();
    setDraftsVersion((n) => n + 1);
  };
  // New mail and teammates' changes show as they happen (docs/api.md §19.15).
  useLive(['inbox_thread'], reloadAll);

  // Another conversation opened: the composer of the last one closes (its draft is saved); a new email stays.
  useEffect(() => setCompose((c) => (thread ? (c?.threadId === thread ? c : null) : c?.mode === 'new' ? c : null)), [thread]);

  // Bumped by a change made here, so the open conversation shows it at once (the live stream follows a moment later).
  const [threadVersion, setThreadVersion] = useState(0);
  const act = useAction(async (t: string, body: { folder?: Folder; read?: boolean; assignee?: string | null }) => {
    await patch(url('/inboxes/:inbox/threads/:thread', { inbox: id, thread: t }), body);
    setThreadVersion((n) => n + 1);
    if (body.folder) {
      notify(`Moved to ${FOLDER_NAMES[body.folder].toLowerCase()}.`);
      // Out of this list: the next conversation opens, as after archiving in a mail client.
      const next = current < 0 ? undefined : (rows[current + 1] ?? rows[current - 1]);
      navigate(withQuery({ thread: next && next.id !== t ? next.id : null }), { replace: true });
    }
    reloadAll();
  });
  const remove = useAction(async (t: string) => {
    if (!(await ask('Delete this conversation and its messages for good? This cannot be undone.', { confirm: 'Delete forever' }))) return;
    await del(url('/inboxes/:inbox/threads/:thread', { inbox: id, thread: t }));
    notify('Conversation deleted.');
    navigate(withQuery({ thread: null }), { replace: true });
    reloadAll();
  });
  const actions = {
    remove: () => thread && void remove.run(thread),
    move: (f: Folder) => thread && void act.run(thread, { folder: f }),
    assign: (assignee: string | null) => {
      if (thread) void act.run(thread, { assignee }).then((ok) => ok && notify(assignee ? `Assigned to ${assignee}.` : 'Unassigned.'));
    },
    setRead: (read: boolean) => {
      if (!thread) return;
      void act.run(thread, { read }).then(() => {
        // Marked unread: back to the list, or opening it would read it again.
        if (!read) navigate(withQuery({ thread: null }));
      });
    },
    busy: act.busy || remove.busy,
  };

  const keys = useRef<(e: KeyboardEvent) => void>(() => {});
  keys.current = (e: KeyboardEvent) => {
    if (!isShortcut(e)) return;
    const at = current >= 0 ? current : -1;
    const handled = (() => {
      switch (e.key) {
        case 'j':
          if (rows[at + 1]) open(rows[at + 1]!.id);
          return true;
        case 'k':
          if (at > 0) open(rows[at - 1]!.id);
          return true;
        case 'u':
          if (thread) open(null);
          return true;
        case '/':
          search.current?.focus();
          return true;
        case '?':
          setHelp(true);
          return true;
        case 'r':
        case 'f':
          // The thread's toolbar knows which message a reply or forward is for.
          if (!thread || !member) return false;
          document.querySelector<HTMLButtonElement>(`.thread-toolbar [aria-keyshortcuts="${e.key}"]`)?.click();
          return true;
        case 'e':
          if (thread && member) actions.move('archive');
          return true;
        case '#':
          if (thread && member) actions.move('trash');
          return true;
      }
      return false;
    })();
    if (handled) e.preventDefault();
  };
  useEffect(() => {
    const on = (e: KeyboardEvent) => keys.current(e);
    document.addEventListener('keydown', on);
    return () => document.removeEventListener('keydown', on);
  }, []);

  if (inbox.error)
    return (
      <>
        <PageHeader back={{ href: '/dashboard/inboxes', label: 'Inboxes' }} title="Inbox" />
        <ErrorBox error={inbox.error} />
      </>
    );
  if (!inbox.data) return <Loading />;
  const i = inbox.data;
  const heading = q
    ? `Search: ${q}`
    : label
      ? (labels.data?.data.find((l) => l.id === label)?.name ?? 'Label')
      : drafts
        ? 'Drafts'
        : FOLDER_NAMES[folder ?? 'inbox'];
  const composingNew = compose?.mode === 'new' && !thread;

  return (
    <>
      <PageHeader
        title={inboxName(i)}
        description={i.email_address}
        actions={
          <>
            <button type="button" class="btn ghost small shortcuts-button" onClick={() => setHelp(true)} aria-keyshortcuts="?">
              Shortcuts
            </button>
            <a class="btn small" href={page`/dashboard/inboxes/${id}/settings`}>
              Settings
            </a>
            {member && (
              <button
                type="button"
                class="btn primary small"
                onClick={() => {
                  navigate(withQuery({ thread: null }));
                  setCompose({ mode: 'new', focus: true });
                }}
              >
                New email
              </button>
            )}
          </>
        }
      />
      <div class={`mailbox ${thread || composingNew ? 'showing-thread' : 'showing-list'}`}>
        <nav class="mailbox-rail" aria-label="Folders and labels">
          {inboxes.data && inboxes.data.data.length > 1 && (
            <select class="inbox-picker" aria-label="Inbox" value={id} onChange={(e) => navigate(page`/dashboard/inboxes/${val(e)}`)}>
              {inboxes.data.data.map((x) => (
                <option value={x.id}>{inboxName(x)}</option>
              ))}
            </select>
          )}
          <ul class="rail-list">
            {FOLDERS.map((f) => (
              <li key={f}>
                <a
                  class="rail-link"
                  href={listView({ folder: f === 'inbox' ? null : f, label: null, q: null, view: null })}
                  aria-current={!q && !label && !drafts && folder === f ? 'page' : undefined}
                >
                  <span>{FOLDER_NAMES[f]}</span>
                  {f === 'inbox' && i.unread > 0 && (
                    <span class="rail-count">
                      {i.unread}
                      <span class="sr-only"> unread</span>
                    </span>
                  )}
                </a>
              </li>
            ))}
            <li>
              <a class="rail-link" href={listView({ view: 'drafts', folder: null, label: null, q: null })} aria-current={drafts ? 'page' : undefined}>
                <span>Drafts</span>
                {i.drafts > 0 && <span class="rail-count">{i.drafts}</span>}
              </a>
            </li>
          </ul>
          {labels.data && labels.data.data.length > 0 && (
            <>
              <h2 class="rail-head">Labels</h2>
              <ul class="rail-list">
                {labels.data.data.map((l) => (
                  <li key={l.id}>
                    <a
                      class="rail-link"
                      href={listView({ label: l.id, folder: null, q: null, view: null })}
                      aria-current={label === l.id && !q ? 'page' : undefined}
                    >
                      <span>
                        <Swatch color={l.color} /> {l.name}
                      </span>
                    </a>
                  </li>
                ))}
              </ul>
            </>
          )}
        </nav>
        <section class="mailbox-list" aria-label="Conversations">
          <form
            class="mailbox-search"
            onSubmit={(e) => {
              e.preventDefault();
              const v = search.current?.value.trim() ?? '';
              navigate(listView({ q: v || null, folder: null, view: null }));
            }}
          >
            <input
              ref={search}
              type="search"
              name="q"
              aria-label="Search conversations"
              placeholder="Search subject, people, text"
              defaultValue={q ?? ''}
              key={q ?? ''}
            />
            <button type="submit" class="btn small">
              Search
            </button>
          </form>
          <div class="list-head">
            <h2>{heading}</h2>
            {!drafts && (
              <label class="check unread-only small">
                <input
                  type="checkbox"
                  checked={unreadOnly}
                  onChange={(e) => navigate(withQuery({ unread: e.currentTarget.checked ? '1' : null, after: null, before: null }), { replace: true })}
                />
                Unread only
              </label>
            )}
            <button type="button" class="btn ghost small" onClick={reloadAll}>
              Refresh
            </button>
          </div>
          {drafts ? (
            <DraftList
              key={draftsVersion}
              inboxId={id}
              onOpen={(c) => (c.threadId ? navigate(withQuery({ thread: c.threadId, view: null })) : setCompose(c))}
            />
          ) : (
            <ThreadList list={list} current={thread} searching={!!q} />
          )}
        </section>
        <section class="mailbox-thread" aria-label="Conversation">
          {composingNew && compose ? (
            <>
              <a class="back mailbox-back" href={withQuery({ thread: null })} onClick={() => setCompose(null)}>
                ← {heading}
              </a>
              <Composer
                key={compose.draft?.id ?? 'new'}
                inboxId={id}
                compose={compose}
                onClose={() => setCompose(null)}
                onSent={() => {
                  setCompose(null);
                  reloadAll();
                }}
              />
            </>
          ) : thread ? (
            <ThreadView
              key={thread}
              inboxId={id}
              threadId={thread}
              version={threadVersion}
              compose={compose}
              setCompose={setCompose}
              actions={actions}
              onChanged={reloadAll}
              back={
                <a class="back mailbox-back" href={withQuery({ thread: null })}>
                  ← {heading}
                </a>
              }
            />
          ) : (
            <Empty title="No conversation open.">Pick one from the list, or press j to open the first.</Empty>
          )}
          <ErrorBox error={act.error ?? remove.error} />
        </section>
      </div>
      <Dialog open={help} title="Keyboard shortcuts" onClose={() => setHelp(false)}>
        <dl class="shortcuts">
          {SHORTCUTS.map(([k, what]) => (
            <div key={k}>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
      </Dialog>
    </>
  );
}

function ThreadList({ list, current, searching }: { list: Paged<InboxThread | InboxThreadSearchResult>; current: string | null; searching: boolean }) {
  if (list.error) return <ErrorBox error={list.error} />;
  if (list.loading && !list.data) return <Loading />;
  if (!list.rows.length) return <p class="muted list-empty">{searching ? 'No conversation matches.' : 'No conversations here.'}</p>;
  return (
    <>
      <ul class="threads">
        {list.rows.map((t) => (
          <li key={t.id} class={`thread-item${t.read ? '' : ' unread'}${t.id === current ? ' current' : ''}`}>
            <a class="thread-link" href={withQuery({ thread: t.id })} aria-current={t.id === current ? 'true' : undefined}>
              <span class="thread-line">
                <span class="thread-from">
                  {!t.read && <span class="unread-dot" aria-hidden="true" />}
                  {!t.read && <span class="sr-only">Unread: </span>}
                  <span title={t.from ?? undefined}>{t.from ? personName(t.from) : t.to.map(personName).join(', ')}</span>
                  {t.email_count > 1 && <span class="thread-count"> {t.email_count}</span>}
                </span>
                <span class="thread-date small">
                  <Time iso={t.received_at} />
                </span>
              </span>
              <span class="thread-subject">{t.subject || '(no subject)'}</span>
              {t.snippet && <span class="thread-snippet small">{t.snippet}</span>}
              <span class="thread-meta small">
                {searching && <span class="muted">{FOLDER_NAMES[t.folder]}</span>}
                {t.assignee && <span class="assignee">Assigned to {personName(t.assignee)}</span>}
                {t.has_draft && <span class="draft-mark">Draft</span>}
                {t.has_attachment && <Paperclip label="Has attachments" />}
                <LabelChips labels={t.labels} />
              </span>
            </a>
          </li>
        ))}
      </ul>
      <Pager {...list} />
    </>
  );
}

function DraftList({ inboxId, onOpen }: { inboxId: string; onOpen: (c: Compose) => void }) {
  const drafts = useGet(url('/inboxes/:inbox/drafts', { inbox: inboxId, limit: 100 }));
  const openDraft = useAction(async (d: InboxDraftListItem) => {
    if (d.thread_id) return onOpen({ mode: 'reply', threadId: d.thread_id });
    const draft = await get(url('/inboxes/:inbox/drafts/:draft', { inbox: inboxId, draft: d.id }));
    onOpen({ mode: 'new', draft });
  });
  if (drafts.error) return <ErrorBox error={drafts.error} />;
  if (!drafts.data) return <Loading />;
  if (!drafts.data.data.length) return <p class="muted list-empty">No drafts.</p>;
  return (
    <>
      <ErrorBox error={openDraft.error} />
      <ul class="threads">
        {drafts.data.data.map((d) => (
          <li key={d.id} class="thread-item">
            <button type="button" class="thread-link" onClick={() => void openDraft.run(d)}>
              <span class="thread-line">
                <span class="thread-from">{d.to?.join(', ') || (d.type === 'reply' ? 'Reply' : '(no recipient)')}</span>
                <span class="thread-date small">
                  <Time iso={d.updated_at} />
                </span>
              </span>
              <span class="thread-subject">{d.subject || '(no subject)'}</span>
              <span class="thread-meta small muted">{d.snippet}</span>
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
