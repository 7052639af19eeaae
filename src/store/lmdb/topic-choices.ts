// Contacts' topic choices, stored twice so both directions are range scans (as memberships are):
// [team, contact, topic] → subscription answers a contact's choices, [team, topic, contact] lets a
// deleted topic take its choices with it.
import type { Database, Key, LmdbEnv } from './env';
import type { TopicChoicesTx } from '../interface';
import type { Subscription } from '../audience-records';

export class LmdbTopicChoices implements TopicChoicesTx {
  private readonly byContact: Database;
  private readonly byTopic: Database;

  constructor(private readonly env: LmdbEnv) {
    this.byContact = env.db('topic_choices.by_contact');
    this.byTopic = env.db('topic_choices.by_topic');
  }

  async get(team: string, contactId: string, topicId: string): Promise<Subscription | undefined> {
    return this.byContact.get([team, contactId, topicId]) as Subscription | undefined;
  }

  async of(team: string, contactId: string): Promise<Record<string, Subscription>> {
    const out: Record<string, Subscription> = {};
    for (const { key, value } of this.byContact.getRange({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] }))
      out[String((key as Key[])[2])] = value as Subscription;
    return out;
  }

  set(team: string, contactId: string, topicId: string, subscription: Subscription): void {
    this.env.assertWriting();
    this.byContact.put([team, contactId, topicId], subscription);
    this.byTopic.put([team, topicId, contactId], null);
  }

  async removeContact(team: string, contactId: string): Promise<void> {
    this.env.assertWriting();
    for (const key of this.byContact.getKeys({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] })) {
      this.byContact.remove(key);
      this.byTopic.remove([team, String((key as Key[])[2]), contactId]);
    }
  }

  async removeTopic(team: string, topicId: string): Promise<void> {
    this.env.assertWriting();
    for (const key of this.byTopic.getKeys({ start: [team, topicId, ''], end: [team, topicId, '\uffff'] })) {
      this.byTopic.remove(key);
      this.byContact.remove([team, String((key as Key[])[2]), topicId]);
    }
  }
}
