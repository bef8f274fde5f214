import { createHash } from 'node:crypto';

/** Stable partition for a key: the same key always lands in the same partition. */
export function partitionOf(key: string, partitions: number): number {
  return createHash('sha1').update(key).digest().readUInt32BE(0) % partitions;
}
