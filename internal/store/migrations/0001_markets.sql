-- Markets from every source, upserted by (source, source_id).
CREATE TABLE markets (
	id              {{serial}},
	source          TEXT NOT NULL,
	source_id       TEXT NOT NULL,
	kind            TEXT NOT NULL,
	origin          TEXT NOT NULL DEFAULT '',
	question        TEXT NOT NULL,
	criteria        TEXT NOT NULL DEFAULT '',
	background      TEXT NOT NULL DEFAULT '',
	url             TEXT NOT NULL DEFAULT '',
	category        TEXT NOT NULL DEFAULT '',
	event_id        TEXT NOT NULL DEFAULT '',
	type            TEXT NOT NULL,
	outcomes        TEXT NOT NULL,          -- JSON array of names
	prices          TEXT,                   -- JSON object outcome -> price, NULL when unknown
	volume          DOUBLE PRECISION NOT NULL DEFAULT 0,
	liquidity       DOUBLE PRECISION NOT NULL DEFAULT 0,
	open_time       BIGINT,                 -- times are UTC unix microseconds
	close_time      BIGINT,
	status          TEXT NOT NULL,
	resolution      TEXT NOT NULL DEFAULT '',
	resolved_at     BIGINT,
	ambiguous       BOOLEAN NOT NULL DEFAULT FALSE,
	condition_id    TEXT NOT NULL DEFAULT '',
	token_ids       TEXT NOT NULL DEFAULT '[]',
	slug            TEXT NOT NULL DEFAULT '',
	event_slug      TEXT NOT NULL DEFAULT '',
	neg_risk        BOOLEAN NOT NULL DEFAULT FALSE,
	uma_status      TEXT NOT NULL DEFAULT '',
	freeze_time     BIGINT,
	freeze_value    DOUBLE PRECISION,
	resolution_date BIGINT,
	digest          TEXT NOT NULL,          -- hash of the stored fields, to detect no-op upserts
	updated_at      BIGINT NOT NULL,
	UNIQUE (source, source_id)
);
CREATE INDEX markets_by_volume ON markets (volume DESC, id);
CREATE INDEX markets_by_status ON markets (status, close_time);

-- Price history with provenance (SPEC M1): kept locally because the
-- upstream history of closed markets is unreliable.
CREATE TABLE price_points (
	market_id  BIGINT NOT NULL REFERENCES markets (id),
	outcome    TEXT NOT NULL,
	at         BIGINT NOT NULL,
	source     TEXT NOT NULL,
	price      DOUBLE PRECISION NOT NULL,
	fetched_at BIGINT NOT NULL,
	flagged    BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (market_id, outcome, source, at)
);

-- One row per (job, period): the unique key is what makes a scheduled run
-- happen once across replicas.
CREATE TABLE job_runs (
	job         TEXT NOT NULL,
	period      BIGINT NOT NULL,
	owner       TEXT NOT NULL,
	started_at  BIGINT NOT NULL,
	finished_at BIGINT,
	error       TEXT,
	PRIMARY KEY (job, period)
);
