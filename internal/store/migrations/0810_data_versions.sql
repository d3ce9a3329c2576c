-- One row per domain of the stored data (arena.Domain): its version grows
-- by one with every committed transaction that changed what the domain's
-- views show, in that transaction, so caches, boards and exports are keyed
-- by it whichever process or replica wrote.
CREATE TABLE data_versions (
	domain  TEXT PRIMARY KEY,
	version BIGINT NOT NULL
);
INSERT INTO data_versions (domain, version) VALUES ('agents', 0), ('backtest', 0), ('chain', 0), ('humans', 0), ('markets', 0), ('oracle', 0), ('rounds', 0), ('scores', 0), ('submissions', 0), ('traces', 0), ('trading', 0);
