// GET /inboxes/{inbox}/agent/runs (docs/api.md §25.10), a Posthorn extension: the Inbox Agent's runs
// of an inbox, newest first — each new message's, with what came of it. Read-only: the back office's
// agent worker (src/inboxes/agent.ts) writes them.
import type { ApiContext } from '../app';
import type { AgentRunRec } from '../../store';
import { listOf, pageQuery } from '../platform/params';
import { resource, route } from '../platform/route';
import { List, PageQuery } from '../../schemas/common';
import { InboxParams } from '../../schemas/inboxes';
import { AgentRun } from '../../schemas/inbox-agent-runs';
import { findInbox } from '../../inboxes';

export const agentRunView = (r: AgentRunRec): AgentRun => ({
  object: 'inbox_agent_run',
  id: r.id,
  inbox_id: r.inbox_id,
  thread_id: r.thread_id,
  email_id: r.email_id,
  status: r.status,
  attempts: r.attempts,
  prompt_chars: r.prompt_chars,
  prompt_tokens: r.prompt_tokens,
  completion_tokens: r.completion_tokens,
  draft_id: r.draft_id,
  actions: r.actions,
  error: r.error,
  duration_ms: r.duration_ms,
  created_at: r.created_at,
  started_at: r.started_at,
  finished_at: r.finished_at,
});

export const inboxAgentRunsResource = resource('Inboxes', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/inboxes/:inbox/agent/runs',
    summary: 'List the Inbox Agent’s runs of an inbox (Posthorn)',
    description:
      'Newest first: each new message the agent was asked about, with its status, the prompt’s size, the tokens counted, the draft made, the actions proposed, how long the model took, and why a run failed. An unknown inbox → 404.',
    access: 'team',
    params: InboxParams,
    query: PageQuery,
    body: 'none',
    response: List(AgentRun),
    async handler({ caller, params, query }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      return listOf(await store.agentRuns.pageBy('inbox', inbox.id, caller.team, pageQuery(query), 20, agentRunView));
    },
  }),
]);
