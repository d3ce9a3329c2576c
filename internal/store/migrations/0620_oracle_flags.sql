-- Markets an admin marked ambiguous or disputed: each goes through the
-- oracle before either track settles or scores it, and from then on only
-- the oracle (or an arbiter) resolves it, whatever the source reports.
CREATE TABLE oracle_flags (
	market_id  BIGINT PRIMARY KEY REFERENCES markets (id),
	reason     TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
