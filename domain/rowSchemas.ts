// Schemas for database values that several repositories read the same way.
import { Schema, SchemaGetter } from 'effect';

/** A bigint column (the driver reads it as a JS bigint) as a number: counts stay far below 2^53. */
export const BigCount = Schema.BigInt.pipe(
  Schema.decodeTo(Schema.Number, { decode: SchemaGetter.transform((n: bigint) => Number(n)), encode: SchemaGetter.transform((n: number) => BigInt(n)) }),
);
