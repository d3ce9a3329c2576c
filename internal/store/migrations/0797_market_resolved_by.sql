-- Who resolved a market: '' its source (or the oracle, whose resolutions
-- have their own table), 'operator' an operator through the admin API or
-- arena round resolve --from-sim. Pages show it as the resolution's
-- provenance.
ALTER TABLE markets ADD COLUMN resolved_by TEXT NOT NULL DEFAULT '';
