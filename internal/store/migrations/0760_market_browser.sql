-- The question browser: markets of a status or category newest first, and
-- the scored forecasts of a page of markets.
CREATE INDEX markets_by_status_id ON markets (status, id);
CREATE INDEX markets_by_category ON markets (category, id);
CREATE INDEX scored_forecasts_by_market ON scored_forecasts (market_id);
