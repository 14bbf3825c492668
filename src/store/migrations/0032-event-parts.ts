import type { Migration } from './index.js';

export const m0032EventParts: Migration = {
  version: 32,
  name: "a large scan event's data stored in parts, before its recording's last transaction",
  sql: `
-- The scan event of a chunked recording carries every risk id of the scan:
-- 2.1 MB of JSON for an upload of 40,020 findings, written in the recording's
-- last transaction, which then held the event loop 42-56 ms (bench/scale.ts).
-- It is written before that transaction instead, held like the recording's
-- risk events (events.held_by): its row first, with an empty payload, then
-- its data in parts of about 512 KiB, a transaction each, a turn of the
-- event loop between them. Its data is the payload followed by its parts in
-- order; events.parts counts them, 0 for every other event. The parts go
-- with their event (a rollback discards it; an account's deletion).
ALTER TABLE events ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;
CREATE TABLE event_parts (
  event_seq INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
  part      INTEGER NOT NULL,
  text      TEXT NOT NULL,
  PRIMARY KEY (event_seq, part)
) STRICT;
`,
};
