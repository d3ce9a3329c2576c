-- Token buckets of the API's rate limits, shared by every replica on one
-- database. tokens is the bucket's content after its last request,
-- updated_at that request's time (unix microseconds), granted whether that
-- request was let through.
CREATE TABLE rate_buckets (
    key        TEXT PRIMARY KEY,
    tokens     DOUBLE PRECISION NOT NULL,
    granted    INTEGER NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at);
