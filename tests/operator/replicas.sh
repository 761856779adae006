#!/usr/bin/env bash
# Two replicas of engram-server on one PostgreSQL database, as the README's
# "Running several replicas" shows them. Run in an empty folder with
# ENGRAM_DATABASE naming an empty PostgreSQL database (tests/tests/e2e/replicas.rs
# runs it on a fresh one); its servers are stopped when it ends. Its ports
# lie below Linux's ephemeral range (32768 up), which the other tests'
# servers and connections draw from, so they are free.
set -euo pipefail
trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT

# readme:begin replicas
# Every replica: the same database, a search index of its own (built from
# the database when missing), any address a load balancer can reach.
export ENGRAM_DATABASE="${ENGRAM_DATABASE:-postgres://engram:secret@db.internal:5432/engram}"
engram-server --listen 127.0.0.1:15061 --index-dir index-a &
engram-server --listen 127.0.0.1:15062 --index-dir index-b &
# readme:end replicas

for server in http://127.0.0.1:15061 http://127.0.0.1:15062; do
  for _ in $(seq 100); do
    engram --server "$server" stats >/dev/null 2>&1 && break
    sleep 0.2
  done
done

# readme:begin replicas-use
# A write through one replica is found through the other once that one has
# applied the change from the database's feed: milliseconds.
engram --server http://127.0.0.1:15061 -n demo create --type fact "The staging cluster runs in eu-west-1"
for _ in $(seq 50); do
  engram --server http://127.0.0.1:15062 -n demo search "where does the staging cluster run" | grep eu-west-1 && break
  sleep 0.1
done
# readme:end replicas-use
engram --server http://127.0.0.1:15062 -n demo search "where does the staging cluster run" | grep -q eu-west-1
