// What the Inboxes pages share (docs/api.md §25): the folders, in the order the page lists them.
import type { InboxThread } from '../../../src/schemas/inboxes';

export type Folder = InboxThread['folder'];

export const FOLDER_NAMES: Record<Folder, string> = { inbox: 'Inbox', sent: 'Sent', archive: 'Archive', spam: 'Spam', trash: 'Trash' };
export const FOLDERS = Object.keys(FOLDER_NAMES) as Folder[];
