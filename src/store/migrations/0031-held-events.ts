import type { Migration } from './index.js';

export const m0031HeldEvents: Migration = {
  version: 31,
  name: "a chunked recording's events held in the outbox until its last transaction",
  sql: `
-- A chunked recording (pending_recordings) writes its risk events to the
-- outbox with each chunk, marked with its scan id, instead of holding them in
-- the connection's TEMP tables and moving them all in its last transaction
-- (40,020 events of an upload held the event loop 708 ms there,
-- bench/scale.ts). Delivery reads the outbox no further than the first event
-- of a recording still pending (its first_event_seq), so nothing of it goes
-- out before its last transaction ends the marker; a rollback deletes the
-- events it marked.
ALTER TABLE events ADD COLUMN held_by TEXT;
ALTER TABLE pending_recordings ADD COLUMN first_event_seq INTEGER;
`,
};
