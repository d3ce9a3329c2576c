-- Tamper-evident log: RFC 6962 leaves in append order, and the signed tree
-- heads the server has published.
CREATE TABLE log_entries (
	idx        BIGINT PRIMARY KEY,
	kind       TEXT NOT NULL,
	data       TEXT NOT NULL,
	leaf_hash  TEXT NOT NULL,
	created_at BIGINT NOT NULL
);

CREATE TABLE log_heads (
	tree_size  BIGINT PRIMARY KEY,
	root_hash  TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	signature  TEXT NOT NULL
);
