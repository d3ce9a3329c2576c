-- Names compared by their look-alikes, and a cap on profile updates.
-- name_key becomes the name's folded confusable skeleton and
-- name_skeleton its exact one (arena.NameKeys), each unique, so that no
-- agent's name can pass for another's. The store recomputes the keys of
-- the names already stored right after this file, in its transaction
-- (rekeyAgentNames), oldest agent first; an agent whose name is one with
-- an earlier agent's keeps its name without keys until it next changes
-- its profile.
-- profile_spent_until (unix microseconds, NULL: never) is how far ahead
-- the agent's allowance of signed profile updates is spent.
ALTER TABLE agents ADD COLUMN name_skeleton TEXT;
CREATE UNIQUE INDEX agents_name_skeleton ON agents (name_skeleton);
ALTER TABLE agents ADD COLUMN profile_spent_until BIGINT;
UPDATE agents SET name_key = NULL;
