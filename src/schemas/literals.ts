// A closed set of strings on the wire (statuses, kinds): one literal each, so the TypeScript type
// is the set itself and the OpenAPI document lists the values.
import { Type, type SchemaOptions } from '@sinclair/typebox';

export const OneOf = <const T extends string>(values: readonly T[], opts: SchemaOptions = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    opts,
  );
