// Record shapes of the audience beside contacts and segments: topics and the contacts' choices,
// contact property definitions, contact imports (docs/api.md §12.7–§12.9), and domain claims (§9.9).
import type { Rec } from './interface';

/** A contact's choice about a topic (docs/api.md §12.8). */
export type Subscription = 'opt_in' | 'opt_out';

export interface TopicRec extends Rec {
  name: string;
  description: string | null;
  /** What a contact without a choice of their own gets; fixed at creation. */
  default_subscription: Subscription;
  /** Public topics are listed on the preference page (docs/mail.md §6). */
  visibility: 'public' | 'private';
  /** When a PATCH last changed it (absent: never); `updated_at` of topic.* events (docs/api.md §14.3). */
  updated_at?: string;
}

export type PropertyType = 'string' | 'number';

/** A contact property definition (docs/api.md §12.7): contacts may only carry defined keys. */
export interface ContactPropertyRec extends Rec {
  key: string;
  type: PropertyType;
  fallback_value: string | number | null;
}

export type ImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** How the columns of an import's CSV map to contact fields (column names as in the header row). */
export interface ImportColumns {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: string | null;
  /** Property key → its column (the property's type decides how the cell is read). */
  properties: Record<string, string>;
  /** Columns the column map names: the header must have them (the others are used when present). */
  required: string[];
}

export interface ImportCounts {
  total: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** A contact import (docs/api.md §12.9): its options, and how far its processing got. */
export interface ContactImportRec extends Rec {
  status: ImportStatus;
  completed_at: string | null;
  columns: ImportColumns;
  on_conflict: 'upsert' | 'skip';
  segments: string[];
  topics: { id: string; subscription: Subscription }[];
  /** Size in bytes of the uploaded file (kept in `importFiles` until the import ends). */
  file_size: number;
  counts: ImportCounts;
  /**
   * The persisted cursor, written in the unit of work of each chunk: the byte offset in the file
   * after the last row counted, and the header row (null before it was read).
   */
  cursor: { offset: number; header: string[] | null };
  /** The first failed rows and why (at most 100). */
  failures: { row: number; reason: string }[];
  /** Why the whole import failed (no email column, unreadable file), else null. */
  failure_reason: string | null;
}

export type ClaimStatus = 'pending' | 'verified' | 'completed' | 'blocked' | 'expired' | 'superseded' | 'canceled' | 'failed';

/** A claim of a domain another team holds (docs/api.md §9.9). */
export interface DomainClaimRec extends Rec {
  name: string;
  status: ClaimStatus;
  /** The id the domain gets on this team once the claim completes (the "placeholder" domain). */
  domain_id: string;
  region: string;
  /** Options of the domain to create, as POST /domains takes them. */
  options: {
    custom_return_path: string;
    open_tracking: boolean;
    click_tracking: boolean;
    tracking_subdomain: string | null;
  };
  /** The value the TXT record at `name` must hold. */
  token: string;
  expires_at: string;
  failure_reason: string | null;
  /** When the last verification was asked for. */
  verify_requested_at: string | null;
}
