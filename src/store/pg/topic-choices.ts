// Contacts' topic choices on PostgreSQL: (team, contact, topic) → subscription, indexed by topic
// too so a deleted topic takes its choices with it.
import { unitOf, type Exec } from './env';
import type { TopicChoicesTx } from '../interface';
import type { Subscription } from '../audience-records';

export class PgTopicChoices implements TopicChoicesTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgTopicChoices {
    return new PgTopicChoices(exec);
  }

  async get(team: string, contactId: string, topicId: string): Promise<Subscription | undefined> {
    const [row] = await this.exec.query('SELECT subscription FROM topic_choices WHERE team = $1 AND contact = $2 AND topic = $3', [team, contactId, topicId]);
    return row?.subscription as Subscription | undefined;
  }

  async of(team: string, contactId: string): Promise<Record<string, Subscription>> {
    const rows: { topic: string; subscription: Subscription }[] = await this.exec.query(
      'SELECT topic, subscription FROM topic_choices WHERE team = $1 AND contact = $2 ORDER BY topic',
      [team, contactId],
    );
    return Object.fromEntries(rows.map((r) => [r.topic, r.subscription]));
  }

  set(team: string, contactId: string, topicId: string, subscription: Subscription): void {
    unitOf(this.exec).write(
      'INSERT INTO topic_choices (team, contact, topic, subscription) VALUES ($1, $2, $3, $4) ON CONFLICT (team, contact, topic) DO UPDATE SET subscription = excluded.subscription',
      [team, contactId, topicId, subscription],
    );
  }

  async removeContact(team: string, contactId: string): Promise<void> {
    unitOf(this.exec).write('DELETE FROM topic_choices WHERE team = $1 AND contact = $2', [team, contactId]);
  }

  async removeTopic(team: string, topicId: string): Promise<void> {
    unitOf(this.exec).write('DELETE FROM topic_choices WHERE team = $1 AND topic = $2', [team, topicId]);
  }
}
