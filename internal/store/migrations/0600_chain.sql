-- The deadlines of the signed commit and reveal messages: relaying an
-- agent's own signature to a chain needs the exact message it signed.
ALTER TABLE submissions ADD COLUMN commit_sig_deadline BIGINT;
ALTER TABLE submissions ADD COLUMN reveal_sig_deadline BIGINT;

-- Items the relayer mirrors to an EVM chain, one row each, written before
-- the transaction is broadcast (with the signed transaction), so a restart
-- rebroadcasts the same transaction instead of sending a second one.
CREATE TABLE chain_txs (
	kind       TEXT NOT NULL,
	round_id   BIGINT NOT NULL,
	item       TEXT NOT NULL DEFAULT '',
	nonce      BIGINT NOT NULL DEFAULT 0,
	tx_hash    TEXT NOT NULL DEFAULT '',
	tx_nonce   BIGINT NOT NULL DEFAULT 0,
	raw_tx     TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL,
	block      BIGINT NOT NULL DEFAULT 0,
	error      TEXT NOT NULL DEFAULT '',
	attempts   INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (kind, round_id, item)
);
CREATE INDEX chain_txs_by_status ON chain_txs (status);
