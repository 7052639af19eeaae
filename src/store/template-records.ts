// Templates (docs/api.md §20): a record per template with its latest version, which GET shows and
// PATCH edits, and the version sends use once it is published (Resend's draft and published states);
// and the history of its published versions, a record each (§20.5), apart from the template so
// that a send, which reads the template, never reads its history.
import type { Rec } from './interface';

export type TemplateVariableType = 'string' | 'number';

/** A variable a template declares: a send must give it a value unless it has a fallback. */
export interface TemplateVariable {
  id: string;
  key: string;
  type: TemplateVariableType;
  fallback_value: string | number | null;
  created_at: string;
  updated_at: string;
}

/** One version of a template's content. Versions are never edited: a change makes a new one. */
export interface TemplateVersion {
  /** `current_version_id` while this version is the latest. */
  id: string;
  created_at: string;
  subject: string | null;
  html: string;
  /** null: derived from html when sent; "" = no text part. */
  text: string | null;
  from: string | null;
  reply_to: string[] | null;
  variables: TemplateVariable[];
}

export interface TemplateRec extends Rec {
  name: string;
  /** A team-unique name usable wherever the id is (never a UUID). */
  alias: string | null;
  updated_at: string;
  /** The latest version: what GET shows and PATCH edits (the draft). */
  current: TemplateVersion;
  /** The version sends use; null until the first publish. */
  published: TemplateVersion | null;
  published_at: string | null;
  /**
   * How many versions its history holds (the number of the latest). Absent on templates from
   * before the history (docs/api.md §20.5): their published version, if any, counts as version 1.
   */
  versions?: number;
}

/** One published version of a template, kept until the template is deleted (docs/api.md §20.5). */
export interface TemplateVersionRec extends Rec {
  /** The version's own id (`current_version_id` while it was the latest); `created_at` is when it was published. */
  id: string;
  template_id: string;
  /** 1 for the first version published, then 2, 3…: in the order they were published. */
  number: number;
  /** The version this one restored (POST …/revert), if it is a copy of an earlier one. */
  reverted_from: number | null;
  content: TemplateVersion;
}
