-- ForecastBench's published human forecasts, one row per forecaster,
-- question and resolution date (resolution_date '' for a market question,
-- which resolves with its market). due_date and resolution_date are
-- YYYY-MM-DD. Medians and other aggregates are computed from these rows
-- when read, never stored, so they cannot drift from the forecasts.
CREATE TABLE human_forecasts (
	due_date        TEXT NOT NULL,
	grp             TEXT NOT NULL,
	source          TEXT NOT NULL,
	question_id     TEXT NOT NULL,
	resolution_date TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	forecast        DOUBLE PRECISION NOT NULL,
	reasoning       TEXT NOT NULL,
	searches        TEXT NOT NULL,
	consulted_urls  TEXT NOT NULL,
	PRIMARY KEY (due_date, grp, source, question_id, resolution_date, user_id)
);
