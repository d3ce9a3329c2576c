-- The relayer's incremental pass: the rounds it is still mirroring (a
-- "round" item and no "done" item yet), kept as their own small table so
-- that a pass reads them without scanning every round ever mirrored, and
-- an index to read one round's items.
CREATE TABLE chain_open_rounds (
	round_id BIGINT PRIMARY KEY
);
INSERT INTO chain_open_rounds (round_id)
	SELECT r.round_id FROM chain_txs r WHERE r.kind = 'round'
	AND NOT EXISTS (SELECT 1 FROM chain_txs x WHERE x.kind = 'done' AND x.round_id = r.round_id);
CREATE INDEX chain_txs_by_round ON chain_txs (round_id);
