-- LLM forecasters: what each agent was shown and answered in a round
-- (published after the round is triggered), and the backtest track.
CREATE TABLE forecast_traces (
	round_id      BIGINT NOT NULL REFERENCES rounds (id),
	agent         TEXT NOT NULL,
	agent_id      TEXT NOT NULL,
	submitted     BOOLEAN NOT NULL,
	failure       TEXT NOT NULL DEFAULT '',
	calls         BIGINT NOT NULL,
	cached_calls  BIGINT NOT NULL,
	input_tokens  BIGINT NOT NULL,
	output_tokens BIGINT NOT NULL,
	cost_micros   BIGINT NOT NULL,
	latency_ms    BIGINT NOT NULL,
	trace         TEXT NOT NULL,
	created_at    BIGINT NOT NULL,
	PRIMARY KEY (round_id, agent)
);

-- One forecast per (agent, historical question); never mixed with rounds.
CREATE TABLE backtest_forecasts (
	agent        TEXT NOT NULL,
	market_id    BIGINT NOT NULL REFERENCES markets (id),
	round_key    TEXT NOT NULL,
	source_id    TEXT NOT NULL,
	category     TEXT NOT NULL DEFAULT '',
	event        TEXT NOT NULL DEFAULT '',
	forecast_bps INTEGER NOT NULL,
	benchmark    DOUBLE PRECISION,
	outcome      INTEGER NOT NULL,
	created_at   BIGINT NOT NULL,
	PRIMARY KEY (agent, market_id)
);
