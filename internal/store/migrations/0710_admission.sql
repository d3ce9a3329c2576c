-- The admission cap on new agents an hour counts agents by first sight.
CREATE INDEX agents_by_created ON agents (created_at);
