-- Markets whose resolution by the source an admin disputed: who, when,
-- why, and the resolution disputed. The market keeps that resolution until
-- the oracle or an arbiter decides; from the dispute on, only they change
-- it, whatever the source reports. One dispute per market: once decided,
-- the market is corrected by re-resolution.
CREATE TABLE oracle_disputes (
	market_id  BIGINT PRIMARY KEY REFERENCES markets (id),
	resolution TEXT NOT NULL,
	admin      TEXT NOT NULL,
	reason     TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
