-- API keys are named in logs, history and watch events by a key id: since
-- this migration, the first 8 bytes of HMAC-SHA256 of the key's SHA-256
-- under this secret (before it, of the bare SHA-256, which let any reader
-- of the history test guesses of a weak key offline). The secret is made
-- here, once per database, and never leaves it. Ids recorded before this
-- migration stay as they were.
INSERT INTO engram_meta (key, value) VALUES ('key_id_secret', lower(hex(randomblob(32))));
