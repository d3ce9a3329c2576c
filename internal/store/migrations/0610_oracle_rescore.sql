-- Re-scoring of scored forecast rounds after a market in them was
-- re-resolved: one row per round re-scored by an oracle resolution, with
-- the market's frozen outcome before and after, the round's outcomes as
-- now frozen, and every score before and after (JSON), for audit.
CREATE TABLE round_rescores (
	id            {{serial}},
	round_id      BIGINT NOT NULL REFERENCES rounds (id),
	market_id     BIGINT NOT NULL REFERENCES markets (id),
	resolution_id BIGINT NOT NULL REFERENCES oracle_resolutions (id),
	idx           INTEGER NOT NULL,
	prev_outcome  INTEGER NOT NULL,
	outcome       INTEGER NOT NULL,
	outcomes      TEXT NOT NULL,
	previous      TEXT NOT NULL,
	scores        TEXT NOT NULL,
	created_at    BIGINT NOT NULL
);
CREATE INDEX round_rescores_by_market ON round_rescores (market_id, id);
CREATE INDEX round_rescores_by_round ON round_rescores (round_id, id);
