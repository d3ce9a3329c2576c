-- The full hash tiles of the tamper-evident log's Merkle tree (C2SP
-- tlog-tiles, height 8): tile n of level holds hashes n·256 … n·256+255 of
-- level 8·level of the tree, 32 bytes each (8 KiB). A server keeps only
-- the tree's right edge in memory and reads the rest from here, so every
-- server of the arena shares them. A tile is a function of log_entries:
-- any server may store it, and a tile is stored once and never changed.
-- Tiles missing (a server stopped between appending entries and storing
-- the tiles they fill) are computed again from the entries.
CREATE TABLE log_tiles (
	level      BIGINT NOT NULL,
	n          BIGINT NOT NULL,
	hashes     {{blob}} NOT NULL,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (level, n)
);
