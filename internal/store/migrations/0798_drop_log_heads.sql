-- The log's signed head is its C2SP checkpoint (log_checkpoints): the
-- "forecast-arena tree head v1" heads are no longer signed, served or
-- exported, and nothing reads them. Their roots are the log's own roots
-- at their sizes, which the log's entries still prove.
DROP TABLE log_heads;
