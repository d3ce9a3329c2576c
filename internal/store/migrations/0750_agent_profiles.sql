-- Agent profiles: what an agent says about itself. An external agent
-- signs its profile (profile_version counts its signed updates); the
-- operator registers the profile of the agents it runs. name_key is the
-- name's comparison form (arena.NameKey: NFKC, case folded), unique, so
-- no two agents share a name up to case and compatibility forms; NULL
-- for an agent without a name, and for names stored before this
-- migration until their agent's profile is next written.
ALTER TABLE agents ADD COLUMN organisation TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN homepage TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN profile_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX agents_name_key ON agents (name_key);
