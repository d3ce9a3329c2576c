-- Forecast track (SPEC §5): rounds, their markets, agents with nonces,
-- commits/reveals, and frozen results.
CREATE TABLE rounds (
	id              {{serial}},
	commit_deadline BIGINT NOT NULL,
	reveal_start    BIGINT NOT NULL,
	reveal_deadline BIGINT NOT NULL,
	grace_micros    BIGINT NOT NULL,
	rules           TEXT NOT NULL,
	created_at      BIGINT NOT NULL,
	benchmark_at    BIGINT,
	triggered_at    BIGINT,
	invalidated     BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX rounds_by_commit ON rounds (commit_deadline);

CREATE TABLE round_markets (
	round_id         BIGINT NOT NULL REFERENCES rounds (id),
	idx              INTEGER NOT NULL,
	market_id        BIGINT NOT NULL REFERENCES markets (id),
	benchmark        DOUBLE PRECISION,
	benchmark_bps    INTEGER,
	benchmark_time   BIGINT,
	benchmark_source TEXT NOT NULL DEFAULT '',
	outcome          INTEGER,
	PRIMARY KEY (round_id, idx)
);

-- One nonce per agent across commits and reveals (SPEC F3).
CREATE TABLE agents (
	address    TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	kind       TEXT NOT NULL DEFAULT 'external',
	nonce      BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL
);

-- The primary key makes a second commit by the same agent impossible.
CREATE TABLE submissions (
	round_id       BIGINT NOT NULL REFERENCES rounds (id),
	agent          TEXT NOT NULL REFERENCES agents (address),
	commit_hash    TEXT NOT NULL,
	reasoning_hash TEXT NOT NULL DEFAULT '',
	commit_nonce   BIGINT NOT NULL,
	commit_sig     TEXT NOT NULL,
	committed_at   BIGINT NOT NULL,
	predictions    TEXT,
	salt           TEXT,
	reveal_nonce   BIGINT,
	reveal_sig     TEXT,
	revealed_at    BIGINT,
	reasoning      TEXT,
	PRIMARY KEY (round_id, agent)
);

CREATE TABLE round_scores (
	round_id       BIGINT NOT NULL REFERENCES rounds (id),
	agent          TEXT NOT NULL,
	brier          DOUBLE PRECISION NOT NULL,
	alpha          DOUBLE PRECISION,
	brier_bps2     BIGINT NOT NULL,
	alpha_bps2     BIGINT,
	scored_markets INTEGER NOT NULL,
	benchmarked    INTEGER NOT NULL,
	forfeit        BOOLEAN NOT NULL,
	PRIMARY KEY (round_id, agent)
);

CREATE TABLE scored_forecasts (
	round_id  BIGINT NOT NULL REFERENCES rounds (id),
	agent     TEXT NOT NULL,
	market_id BIGINT NOT NULL,
	category  TEXT NOT NULL,
	event     TEXT NOT NULL,
	forecast  DOUBLE PRECISION NOT NULL,
	benchmark DOUBLE PRECISION,
	outcome   INTEGER NOT NULL,
	forfeit   BOOLEAN NOT NULL,
	PRIMARY KEY (round_id, agent, market_id)
);
