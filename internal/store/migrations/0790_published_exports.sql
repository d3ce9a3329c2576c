-- The exports serve publishes, one per checkpoint, shared by every server
-- of the arena so that any of them answers /exports/. An export's files
-- are cut into parts at line boundaries chosen by the lines' content, and
-- each part is stored once under its SHA-256: consecutive exports, whose
-- tables differ mostly in rows appended at their end, share almost every
-- part. A manifest lists, for the checkpoint of tree_size entries, each
-- file with its size, its SHA-256 and its parts in order.
CREATE TABLE export_parts (
	hash       TEXT PRIMARY KEY,
	data       {{blob}} NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE TABLE export_manifests (
	tree_size  BIGINT PRIMARY KEY,
	manifest   TEXT NOT NULL,
	created_at BIGINT NOT NULL
);
