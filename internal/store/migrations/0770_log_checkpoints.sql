-- The latest C2SP checkpoint of the tamper-evident log, with the witness
-- cosignatures collected for it: one row, shared by every server of the
-- arena so that none publishes a checkpoint contradicting it. text is the
-- note's signed text (without its signature lines), compared when a
-- checkpoint of the same size is saved again with more cosignatures.
CREATE TABLE log_checkpoints (
	id         BIGINT PRIMARY KEY CHECK (id = 1),
	tree_size  BIGINT NOT NULL,
	text       TEXT NOT NULL,
	note       TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);
