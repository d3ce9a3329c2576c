-- Trading track (SPEC §6). Money is integer micro-dollars, prices integer
-- parts per million, quantities integer micro-shares; times are UTC unix
-- microseconds.

-- One cohort per normalized week start (Sunday 00:00 UTC): the unique
-- constraint makes a second impossible (T1). lineup is the frozen JSON
-- list of agents with model ids, provider and prices (T9).
CREATE TABLE cohorts (
	id           {{serial}},
	week_start   BIGINT NOT NULL UNIQUE,
	status       TEXT NOT NULL,
	lineup       TEXT NOT NULL,
	initial_cash BIGINT NOT NULL,
	created_at   BIGINT NOT NULL,
	completed_at BIGINT
);

-- version increases with every ledger write (optimistic concurrency).
CREATE TABLE portfolios (
	id        {{serial}},
	cohort_id BIGINT NOT NULL REFERENCES cohorts (id),
	agent_id  TEXT NOT NULL,
	cash      BIGINT NOT NULL,
	realized  BIGINT NOT NULL DEFAULT 0,
	bankrupt  BOOLEAN NOT NULL DEFAULT FALSE,
	version   BIGINT NOT NULL DEFAULT 0,
	UNIQUE (cohort_id, agent_id)
);

CREATE TABLE positions (
	id           {{serial}},
	portfolio_id BIGINT NOT NULL REFERENCES portfolios (id),
	market_id    BIGINT NOT NULL REFERENCES markets (id),
	side         TEXT NOT NULL,
	shares       BIGINT NOT NULL,
	cost_basis   BIGINT NOT NULL,
	mark         BIGINT NOT NULL,
	status       TEXT NOT NULL,
	opened_at    BIGINT NOT NULL,
	closed_at    BIGINT
);
-- One open position per market per side (T4).
CREATE UNIQUE INDEX positions_one_open ON positions (portfolio_id, market_id, side) WHERE status = 'open';
CREATE INDEX positions_by_market ON positions (market_id, status);

-- The unique (cohort, agent, week) claim row and audit record (T2, T5).
CREATE TABLE decisions (
	id             {{serial}},
	cohort_id      BIGINT NOT NULL REFERENCES cohorts (id),
	agent_id       TEXT NOT NULL,
	week           BIGINT NOT NULL,
	status         TEXT NOT NULL,
	owner          TEXT NOT NULL,
	claimed_at     BIGINT NOT NULL,
	attempts       INTEGER NOT NULL DEFAULT 1,
	system_prompt  TEXT NOT NULL DEFAULT '',
	user_prompt    TEXT NOT NULL DEFAULT '',
	raw_responses  TEXT NOT NULL DEFAULT '[]',
	action         TEXT,
	executions     TEXT,
	retries        INTEGER NOT NULL DEFAULT 0,
	system_default BOOLEAN NOT NULL DEFAULT FALSE,
	tokens_in      BIGINT NOT NULL DEFAULT 0,
	tokens_out     BIGINT NOT NULL DEFAULT 0,
	cost           BIGINT NOT NULL DEFAULT 0,
	latency_ms     BIGINT NOT NULL DEFAULT 0,
	error          TEXT NOT NULL DEFAULT '',
	finished_at    BIGINT,
	UNIQUE (cohort_id, agent_id, week)
);

CREATE TABLE trades (
	id           {{serial}},
	portfolio_id BIGINT NOT NULL REFERENCES portfolios (id),
	position_id  BIGINT NOT NULL REFERENCES positions (id),
	decision_id  BIGINT REFERENCES decisions (id),
	market_id    BIGINT NOT NULL REFERENCES markets (id),
	side         TEXT NOT NULL,
	kind         TEXT NOT NULL,
	amount       BIGINT NOT NULL,
	shares       BIGINT NOT NULL,
	price        BIGINT NOT NULL,
	cost_basis   BIGINT NOT NULL,
	cash_before  BIGINT NOT NULL,
	confidence   DOUBLE PRECISION NOT NULL DEFAULT 0,
	created_at   BIGINT NOT NULL
);
CREATE INDEX trades_by_portfolio ON trades (portfolio_id, id);

-- The frozen market snapshot of a cohort's decision week: every run of the
-- week executes at these prices.
CREATE TABLE trading_frames (
	cohort_id  BIGINT NOT NULL REFERENCES cohorts (id),
	week       BIGINT NOT NULL,
	frame      TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (cohort_id, week)
);

-- Valuations every 10 minutes, timestamp floored, unique per portfolio (T7).
CREATE TABLE portfolio_snapshots (
	portfolio_id    BIGINT NOT NULL REFERENCES portfolios (id),
	at              BIGINT NOT NULL,
	cash            BIGINT NOT NULL,
	positions_value BIGINT NOT NULL,
	total           BIGINT NOT NULL,
	pnl             BIGINT NOT NULL,
	pnl_pct         DOUBLE PRECISION NOT NULL,
	brier           DOUBLE PRECISION NOT NULL,
	resolved_bets   INTEGER NOT NULL,
	PRIMARY KEY (portfolio_id, at)
);

-- A market is marked settled only in the transaction that settles its last
-- open position (T8).
CREATE TABLE market_settlements (
	market_id  BIGINT PRIMARY KEY REFERENCES markets (id),
	resolution TEXT NOT NULL,
	policy     TEXT NOT NULL,
	positions  INTEGER NOT NULL,
	settled_at BIGINT NOT NULL
);
