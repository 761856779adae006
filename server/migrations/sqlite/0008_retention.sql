-- Retention (DESIGN §8) purges request ids older than their time to live,
-- oldest first, a few hundred at a time: without an index by age each batch
-- would read every request id. (Expired memories are found through
-- memories_by_expire_time.)
CREATE INDEX create_requests_by_create_time ON create_requests (create_time);
