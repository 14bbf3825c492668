import type { Migration } from './index.js';

export const m0033RiskInsertsCountThemselves: Migration = {
  version: 33,
  name: 'new risks added to the open risk counters by the statements that insert them',
  sql: `
-- Any trigger on a table makes each INSERT into it open a statement journal,
-- a copy of every existing page the statement changes, so that the statement
-- alone can be undone if the trigger fails. A risk's insert changes a page of
-- the table and of each of its 14 indexes: past 64 KiB SQLite spills the
-- journal to a temporary file, so every insert wrote about 60 KiB to disk
-- (bench/ingest.ts: an upload of 45,158 findings wrote 330,000 pages to
-- temporary files, and the rows written alone took three times as long with
-- the counters' trigger as without it). The statements that insert risks
-- (SqliteRiskRepository.insert and insertStaged) add them to the counters
-- themselves, one upsert per counter row, in the same transaction; updates
-- and deletions keep their triggers (0026, 0030), which cover every path
-- that changes or removes a risk, cascades included.
DROP TRIGGER risks_count_insert;
`,
};
