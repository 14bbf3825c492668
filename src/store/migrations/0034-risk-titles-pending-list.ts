import type { Migration } from './index.js';

export const m0034RiskTitlesPendingList: Migration = {
  version: 34,
  name: 'the title filter read from a table of titles filled in sorted batches, newest risks pending',
  sql: `
-- risks_by_account_title (0024) took a quarter of the pages an upload wrote:
-- its entries run by title, so each chunk of a recording appended to the end
-- of every title's range (an nmap upload of 45,158 findings with 73 titles
-- wrote 16,052 of its 65,150 pages there, bench/ingest.ts). risk_titles holds
-- the same entries, written in batches sorted by title a few thousand risks
-- at a time (SqliteRiskRepository, PENDING_TITLES), so each of its pages is
-- written once per batch, not once per chunk: the pending list of
-- PostgreSQL's GIN indexes (fastupdate). Risks above risk_titles_merged.upto
-- are pending: the title filter reads them from the newest end of the
-- account's risks, then the table. A batch is written in the transaction
-- that inserted its last risk, so pending risks never number more than one
-- batch, whatever a crash interrupts.
DROP INDEX risks_by_account_title;
CREATE TABLE risk_titles (
  account_id TEXT NOT NULL,
  title      TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  PRIMARY KEY (account_id, title, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE risk_titles_merged (
  only INTEGER PRIMARY KEY CHECK (only = 1),
  upto INTEGER NOT NULL
) STRICT;
INSERT INTO risk_titles (account_id, title, seq) SELECT account_id, title, seq FROM risks ORDER BY account_id, title, seq;
INSERT INTO risk_titles_merged (only, upto) VALUES (1, COALESCE((SELECT MAX(seq) FROM risks), 0));

-- A merged risk's entry follows it: deleted with it (cascades too), moved
-- when a re-detection changes its title. A pending one has none yet.
CREATE TRIGGER risk_titles_delete AFTER DELETE ON risks
WHEN OLD.seq <= (SELECT upto FROM risk_titles_merged) BEGIN
  DELETE FROM risk_titles WHERE account_id = OLD.account_id AND title = OLD.title AND seq = OLD.seq;
END;
CREATE TRIGGER risk_titles_update AFTER UPDATE OF title ON risks
WHEN OLD.title IS NOT NEW.title AND OLD.seq <= (SELECT upto FROM risk_titles_merged) BEGIN
  UPDATE risk_titles SET title = NEW.title WHERE account_id = OLD.account_id AND title = OLD.title AND seq = OLD.seq;
END;
`,
};
