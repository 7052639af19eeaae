// What the Inbox Agent (agent.ts) reads of an inbox and does to it, through the inbox part's own
// functions: its settings and threads from the store, drafts (drafts.ts `createDraft`, as
// POST /inboxes/{inbox}/drafts makes them) and thread changes (folder, assignee, labels) with their
// `inbox.*` events, `source: 'agent'`. And the hook that queues a
// run for each message received in an inbox whose agent is active (hooks.ts).
import type { Store, StoreReader, Tx } from '../store';
import type { Events } from '../events';
import { log } from '../log';
import { agentActive, queueAgentRun, type AgentInboxes } from './agent';
import { MESSAGE_CHARS, type AgentSettings, type Proposed } from './agent-prompt';
import { createDraft } from './drafts';
import type { ThreadMessageAdded } from './hooks';
import { changeLabels, updateThread } from './threads';
import { snippetOf } from './threading';

/** The agent's settings of an inbox, with the address it writes as. */
async function settingsOf(store: StoreReader, team: string, inboxId: string): Promise<AgentSettings | null> {
  const inbox = await store.inboxes.get(team, inboxId);
  return inbox ? { ...inbox.agent, address: inbox.email_address, name: inbox.from_name ?? inbox.name } : null;
}

export function agentInboxes(store: Store, events: Events): AgentInboxes {
  return {
    settings: (team, inboxId) => settingsOf(store, team, inboxId),

    async thread(team, threadId) {
      const t = await store.inboxThreads.get(team, threadId);
      if (!t) return null;
      const messages = (await store.inboxMessages.findAll('thread', threadId, team)).sort((a, b) => (a.received_at < b.received_at ? -1 : 1));
      return {
        folder: t.folder,
        subject: t.subject ?? '',
        messages: messages.map((m) => ({
          id: m.id,
          from: m.from,
          to: m.to,
          cc: m.cc,
          subject: m.subject ?? '',
          text: m.text ?? snippetOf(null, m.html, MESSAGE_CHARS) ?? '',
          created_at: m.received_at,
          direction: m.direction,
        })),
      };
    },

    async createDraft(team, d) {
      if (d.reply_to_email_id) {
        // An email has one unsent reply draft (docs/api.md §25.6): a teammate's, or this run's made before a crash.
        const mine = (await store.inboxDrafts.findAll('thread', d.thread_id, team)).find((x) => x.reply_to_email_id === d.reply_to_email_id && !x.email_id);
        if (mine) return mine.id;
      }
      const body = d.reply_to_email_id
        ? { thread_id: d.thread_id, reply_to_email_id: d.reply_to_email_id, text: d.text }
        : { to: d.to, subject: d.subject, text: d.text };
      return (await createDraft({ store, events, allowPrivate: false }, team, d.inbox_id, body, 'agent')).id;
    },

    async applyAction(tx, team, threadId, a) {
      const thread = await tx.inboxThreads.get(team, threadId);
      const inbox = thread && (await tx.inboxes.get(team, thread.inbox_id));
      if (!thread || !inbox) return false;
      return applyThreadAction(events, tx, inbox, thread, a);
    },
  };
}

/** A thread action the model proposed, carried out as a teammate's would be; false when it changed nothing it could. */
async function applyThreadAction(
  events: Events,
  tx: Tx,
  inbox: NonNullable<Awaited<ReturnType<Tx['inboxes']['get']>>>,
  thread: NonNullable<Awaited<ReturnType<Tx['inboxThreads']['get']>>>,
  a: Proposed,
): Promise<boolean> {
  const folder = a.type === 'mark_as_spam' ? 'spam' : a.type === 'archive' ? 'archive' : a.type === 'move_to_trash' ? 'trash' : null;
  if (folder) {
    await updateThread(events, tx, inbox, thread, { folder }, 'agent', null);
    return true;
  }
  if (a.type === 'assign_thread') {
    await updateThread(events, tx, inbox, thread, { assignee: a.to }, 'agent', null);
    return true;
  }
  if (a.type === 'add_labels') {
    // The inbox's labels by name: the agent uses the labels there are, and makes none.
    const byName = new Map((await tx.inboxLabels.findAll('inbox', inbox.id, inbox.team_id)).map((l) => [l.name.toLowerCase(), l.id]));
    const ids = a.labels.map((n) => byName.get(n.toLowerCase())).filter((id): id is string => id !== undefined);
    if (!ids.length) return false;
    await changeLabels(events, tx, inbox, thread, ids, 'add', 'agent');
    return true;
  }
  return false;
}

/**
 * The hook's listener (back office thread, after the message's commit): a message received in an
 * inbox whose agent is active, in a thread that is not spam, gets a run queued. Never awaited by
 * intake; a failure here is logged and the message stays as it was stored.
 */
export function queueOnReceived(store: Store): (ev: ThreadMessageAdded) => Promise<void> {
  return async (ev) => {
    if (ev.direction !== 'inbound') return;
    const settings = await settingsOf(store, ev.team, ev.inbox_id);
    if (!agentActive(settings)) return;
    const thread = await store.inboxThreads.get(ev.team, ev.thread_id);
    if (!thread || thread.folder === 'spam' || thread.folder === 'trash') return;
    await store.write(async (tx) => {
      queueAgentRun(tx, { team: ev.team, inbox_id: ev.inbox_id, thread_id: ev.thread_id, email_id: ev.message_id });
    });
    log.info('agent.queued', { team: ev.team, thread_id: ev.thread_id });
  };
}
