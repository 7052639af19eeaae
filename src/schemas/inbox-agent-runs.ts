// The Inbox Agent's runs (docs/api.md §25.10), a Posthorn extension: what came of each new inbox
// message the agent was asked about.
import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './common';

const ACTIONS = ['draft_reply', 'forward_thread', 'add_labels', 'assign_thread', 'mark_as_spam', 'archive', 'move_to_trash'] as const;
const STATUSES = ['queued', 'running', 'drafted', 'no_action', 'over_budget', 'skipped', 'timeout', 'failed'] as const;

export const AgentRunAction = Type.Object({
  type: Type.Union(ACTIONS.map((a) => Type.Literal(a))),
  applied: Type.Boolean({ description: 'Carried out (a draft made, the thread changed), or only proposed' }),
  detail: Nullable(Type.String({ description: 'The address forwarded or assigned to, or the labels' })),
});

export const AgentRun = Type.Object({
  object: Type.Literal('inbox_agent_run'),
  id: Type.String(),
  inbox_id: Type.String(),
  thread_id: Type.String(),
  email_id: Type.String({ description: 'The new message the run is about' }),
  status: Type.Union(STATUSES.map((s) => Type.Literal(s))),
  attempts: Type.Integer(),
  prompt_chars: Nullable(Type.Integer({ description: 'Characters of the prompt sent to the model' })),
  prompt_tokens: Nullable(Type.Integer({ description: 'As the model’s endpoint counted them' })),
  completion_tokens: Nullable(Type.Integer()),
  draft_id: Nullable(Type.String({ description: 'The draft the run made' })),
  actions: Type.Array(AgentRunAction),
  error: Nullable(Type.String({ description: 'Why it failed, was skipped or over budget; or what of the answer was dropped' })),
  duration_ms: Nullable(Type.Integer({ description: 'From the request to the model to its answer' })),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
});
export type AgentRun = Static<typeof AgentRun>;
