-- The relayer's fee bumps: when an item's current transaction was signed
-- (its age decides a bump), and the earlier signed transactions it
-- replaced with the same nonce and higher fees (any of them may be the
-- one mined), as signed hex separated by spaces.
ALTER TABLE chain_txs ADD COLUMN signed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE chain_txs ADD COLUMN replaced TEXT NOT NULL DEFAULT '';
