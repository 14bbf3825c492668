import type { Source } from '../../domain/sources/source.js';

/** The API shape of a Source (SPEC.md, Source). */
export function presentSource(source: Source) {
  return { id: source.id, source_type: source.sourceType, name: source.name };
}
