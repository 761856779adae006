-- API keys are named in logs, history and watch events by a key id: since
-- this migration, the first 8 bytes of HMAC-SHA256 of the key's SHA-256
-- under this secret (before it, of the bare SHA-256, which let any reader
-- of the history test guesses of a weak key offline). The secret is made
-- here, once per database (every replica derives the same ids), and never
-- leaves it. gen_random_uuid() draws from the strong random source: two
-- of them give 244 random bits. Ids recorded before this migration stay as
-- they were. As SQLite's migration 0011.
INSERT INTO engram_meta (key, value)
    VALUES ('key_id_secret',
            translate(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
