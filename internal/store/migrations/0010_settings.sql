-- Deployment settings that commands share through the database, such as
-- the simulated world that `arena sync --source sim` created and that
-- `arena serve` keeps advancing.
CREATE TABLE settings (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at BIGINT NOT NULL
);
