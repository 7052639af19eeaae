// Segments and their legacy name, audiences, on the wire (docs/api.md §11): one collection served
// under two route families that differ only in the `object` value.
import { Type } from '@sinclair/typebox';
import { Id, Timestamp, type Static } from './common';

/** Create (both families) and rename (`PATCH /segments/{id}`). */
export const SegmentNameRequest = Type.Object({ name: Type.String({ error: 'The `name` field must be a string.' }) });

/** An item of a segment list, and of a contact's segments. */
export const SegmentSummary = Type.Object({ id: Id, name: Type.String(), created_at: Timestamp });
export type SegmentSummary = Static<typeof SegmentSummary>;

/** `object` is `segment` or `audience`, after the family the route belongs to. */
export const Segment = <O extends string>(object: O) => Type.Object({ object: Type.Literal(object), id: Id, name: Type.String(), created_at: Timestamp });
export const SegmentCreated = <O extends string>(object: O) => Type.Object({ object: Type.Literal(object), id: Id, name: Type.String() });
