/** A Source (SPEC.md, Source): where uploaded scanner results are collected. IMPORTED is the only type. */
export const SOURCE_TYPES = ['IMPORTED'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const MAX_SOURCE_NAME_LENGTH = 255;

export interface Source {
  id: string;
  accountId: string;
  sourceType: SourceType;
  name: string;
  createdAt: string;
}
