-- Oracle: every panel run on a market and any human decision (SPEC §9).
-- The JSON columns hold the evidence packet, the verdict (votes of both
-- rounds with prompts, raw answers, tokens, cost, latency) and the policy,
-- exactly as used. seq numbers a market's resolutions; seq > 1 is a
-- re-resolution and carries its reason.
CREATE TABLE oracle_resolutions (
	id           {{serial}},
	market_id    BIGINT NOT NULL REFERENCES markets (id),
	seq          INTEGER NOT NULL,
	status       TEXT NOT NULL,
	architecture TEXT NOT NULL,
	decision     TEXT NOT NULL,
	composite    DOUBLE PRECISION NOT NULL,
	final        TEXT NOT NULL DEFAULT '',
	evidence     TEXT NOT NULL,
	verdict      TEXT NOT NULL,
	policy       TEXT NOT NULL,
	arbiter      TEXT NOT NULL DEFAULT '',
	reason       TEXT NOT NULL DEFAULT '',
	created_at   BIGINT NOT NULL,
	decided_at   BIGINT,
	UNIQUE (market_id, seq)
);
CREATE INDEX oracle_resolutions_by_status ON oracle_resolutions (status, created_at);
