-- Name keys folded and mapped until they no longer change
-- (arena.NameKeys): the earlier keys folded case once, before mapping
-- look-alikes, so a look-alike that maps to a capital ("0" and "০" to
-- "O") stayed apart from the small letter ("rand0m" beside "random"), and
-- some look-alikes were not mapped at all ("ĸ", "⟮"). The store recomputes
-- every name's keys right after this file, in its transaction
-- (rekeyAgentNames), oldest agent first; an agent whose name is now one
-- with an earlier agent's keeps its name without keys until it next
-- changes its profile.
UPDATE agents SET name_key = NULL, name_skeleton = NULL;
