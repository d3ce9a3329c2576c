-- What providers reported charging for a forecast trace's model calls
-- (OpenRouter's usage.cost), kept beside cost_micros, the arena's estimate
-- from its price table: billed_micros over the billed_calls that reported
-- a cost (0 and 0 for providers that report none, and for traces stored
-- before this column existed).
ALTER TABLE forecast_traces ADD COLUMN billed_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE forecast_traces ADD COLUMN billed_calls BIGINT NOT NULL DEFAULT 0;
