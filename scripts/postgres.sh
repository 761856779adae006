#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server, for the tests of the
# PostgreSQL backend (./scripts/test.sh runs the test suite through it).
#
#   scripts/postgres.sh COMMAND [ARGS...]   start a server, run COMMAND, stop it
#   scripts/postgres.sh --install           only find (or install) the binaries
#
# COMMAND runs with ENGRAM_TEST_POSTGRES_URL=postgres://engram:PASSWORD@
# 127.0.0.1:PORT/postgres: a superuser of a cluster made for this run alone,
# in a temporary folder, on a free port. Whatever COMMAND does, the server is
# stopped and the folder removed when it ends; the script exits with
# COMMAND's status.
#
# The server binaries (initdb, pg_ctl, postgres) are taken from
# $ENGRAM_POSTGRES_BIN if set, else the newest /usr/lib/postgresql/*/bin
# (Debian and Ubuntu keep them there, off the PATH), else the PATH. When
# there are none, Debian's `postgresql` package is installed with apt-get
# (through sudo unless we are root). With ENGRAM_TEST_POSTGRES_URL already
# set, that server is used as it is and nothing is started.
set -euo pipefail
# Functions whose output is captured ($(...)) stop at a failure too.
shopt -s inherit_errexit

say() { printf 'postgres: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

required=(initdb pg_ctl postgres)

# Whether $1 holds every server binary we need.
complete() {
  local binary
  for binary in "${required[@]}"; do [[ -x $1/$binary ]] || return 1; done
}

# Prints the folder of the server binaries installed on this machine, or
# fails.
find_binaries() {
  local versions=() dir
  shopt -s nullglob
  versions=(/usr/lib/postgresql/*/bin)
  shopt -u nullglob
  if ((${#versions[@]})); then
    # Newest major version first: 10 sorts after 9 by version, not by text.
    while read -r dir; do
      if complete "$dir"; then
        printf '%s\n' "$dir"
        return 0
      fi
    done < <(printf '%s\n' "${versions[@]}" | sort -V -r)
  fi
  if dir="$(command -v initdb)" && complete "$(dirname "$dir")"; then
    dirname "$dir"
    return 0
  fi
  return 1
}

# Installs Debian's postgresql package (the server of the distribution's
# default major version).
install_binaries() {
  local root=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null ||
      die "no PostgreSQL server binaries (${required[*]}) and no sudo to install them: install the postgresql package, or set ENGRAM_POSTGRES_BIN or ENGRAM_TEST_POSTGRES_URL"
    root=(sudo)
  fi
  command -v apt-get >/dev/null ||
    die "no PostgreSQL server binaries (${required[*]}) and no apt-get: install PostgreSQL's server, or set ENGRAM_POSTGRES_BIN or ENGRAM_TEST_POSTGRES_URL"
  say "no PostgreSQL server binaries: installing the postgresql package with apt-get"
  # The package would create a default cluster ("main", port 5432) and start
  # it as a service: a server nobody asked for, left running after the tests.
  # A drop-in of postgresql-common's createcluster.conf turns that off for this
  # install only; it is removed again afterwards, so that a later install by
  # the machine's owner behaves as usual.
  local dropins=/etc/postgresql-common/createcluster.d
  local dropin=$dropins/engram-tests-no-main-cluster.conf
  local made_dropins=false
  if [[ ! -d $dropins ]]; then
    "${root[@]}" mkdir -p "$dropins"
    made_dropins=true
  fi
  echo "create_main_cluster = false" | "${root[@]}" tee "$dropin" >/dev/null
  local log status=0
  log="$(mktemp)"
  # The package lists of a fresh machine are empty: update them first.
  {
    "${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
      "${root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends postgresql
  } >"$log" 2>&1 || status=$?
  "${root[@]}" rm -f "$dropin"
  if $made_dropins; then "${root[@]}" rmdir "$dropins" 2>/dev/null || true; fi
  if ((status != 0)); then
    cat "$log" >&2
    rm -f "$log"
    die "apt-get install postgresql failed (exit $status)"
  fi
  rm -f "$log"
}

# Prints the folder of the server binaries, installing them when missing.
binaries() {
  local dir
  if [[ -n ${ENGRAM_POSTGRES_BIN:-} ]]; then
    complete "$ENGRAM_POSTGRES_BIN" ||
      die "ENGRAM_POSTGRES_BIN=$ENGRAM_POSTGRES_BIN lacks one of ${required[*]}"
    printf '%s\n' "$ENGRAM_POSTGRES_BIN"
    return 0
  fi
  if ! dir="$(find_binaries)"; then
    install_binaries
    dir="$(find_binaries)" ||
      die "the postgresql package is installed, yet ${required[*]} are neither in /usr/lib/postgresql/*/bin nor on the PATH"
  fi
  printf '%s\n' "$dir"
}

# Everything runs from this function, which bash reads whole before it
# starts: a script edited (or checked out anew) while a long run of it goes
# on would otherwise be read on from the middle of the new text.
main() {
  if [[ ${1:-} == --install ]]; then
    bindir="$(binaries)"
    say "$("$bindir/postgres" --version) in $bindir"
    exit 0
  fi
  if (($# == 0)); then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
  fi
  if [[ -n ${ENGRAM_TEST_POSTGRES_URL:-} ]]; then
    say "using the server in ENGRAM_TEST_POSTGRES_URL; starting none"
    exec "$@"
  fi

  bindir="$(binaries)"

  # initdb and the server refuse to run as root: as root, they run as the
  # postgres user the package made (or, with binaries from elsewhere, a system
  # user of our own). Everything they touch is in the scratch folder, owned by
  # that user.
  owner=""
  if ((EUID == 0)); then
    owner=postgres
    if ! id -u "$owner" >/dev/null 2>&1; then
      owner=engram-postgres
      id -u "$owner" >/dev/null 2>&1 ||
        useradd --system --no-create-home --shell /usr/sbin/nologin "$owner"
    fi
  fi

  # The cluster's owner must be able to reach the folder: a TMPDIR private to
  # root is not for it.
  base="${TMPDIR:-/tmp}"
  if [[ -n $owner ]] && ! runuser -u "$owner" -- test -w "$base" -a -x "$base"; then
    base=/tmp
  fi
  scratch="$(mktemp -d "$base/engram-postgres.XXXXXX")"
  data="$scratch/data"
  started=false

  # Runs a server binary as the cluster's owner, from the scratch folder (the
  # caller's working directory may be closed to that user).
  as_owner() {
    if [[ -n $owner ]]; then
      (cd "$scratch" && runuser -u "$owner" -- "$@")
    else
      (cd "$scratch" && "$@")
    fi
  }

  # shellcheck disable=SC2317 # reached through the trap
  cleanup() {
    if $started; then
      # Immediate: no shutdown checkpoint, since the cluster is thrown away.
      if ! as_owner "$bindir/pg_ctl" stop --pgdata="$data" --mode=immediate --wait --silent; then
        tail -n 20 "$scratch/postgres.log" >&2 || true
        say "pg_ctl stop failed"
      fi
    fi
    rm -rf "$scratch"
    if $started; then say "stopped; $scratch removed"; fi
  }
  trap cleanup EXIT
  # The EXIT trap runs on these too, so an interrupted run leaves nothing behind.
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # Letters and digits only, so the password needs no escaping in the URL.
  password="$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
  printf '%s\n' "$password" >"$scratch/password"
  if [[ -n $owner ]]; then chown -R "$owner" "$scratch"; fi

  # C locale: text sorts by bytes, as SQLite's does, whatever the machine's
  # locale. Over TCP the password is required (SCRAM, as a real deployment
  # would use); the socket, in the private scratch folder, trusts its user.
  if ! as_owner "$bindir/initdb" --pgdata="$data" --username=engram \
    --pwfile="$scratch/password" --auth-host=scram-sha-256 --auth-local=trust \
    --encoding=UTF8 --locale=C --no-sync >"$scratch/initdb.log" 2>&1; then
    cat "$scratch/initdb.log" >&2
    die "initdb failed"
  fi
  rm -f "$scratch/password"

  # Settings for tests. fsync stays on, so commits wait for the log as in
  # production: the change feed holds its ordering lock across that wait (see
  # server/migrations/postgres/0001_schema.sql), and tests of concurrent
  # writers should see the commits interleave as they will there. A flush
  # costs 0.1-3.5 ms on this project's machines (their disk is shared), which
  # the PostgreSQL tests of today do not notice. Should the whole end-to-end
  # suite against PostgreSQL make it slow, fsync=off changes nothing a test can
  # observe short of a machine crash. Connections: each test server keeps a
  # pool of its own, up to 10 by default.
  cat >>"$data/postgresql.conf" <<EOF

# scripts/postgres.sh: a throwaway cluster for the tests
listen_addresses = '127.0.0.1'
unix_socket_directories = '$scratch'
max_connections = 300
timezone = 'UTC'
EOF

  # A free port, as the kernel hands one out; taken by someone else before the
  # server binds it, the start fails and another is tried.
  free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  }
  for attempt in 1 2 3 4 5; do
    port="$(free_port)"
    rm -f "$scratch/postgres.log"
    if as_owner "$bindir/pg_ctl" start --pgdata="$data" --log="$scratch/postgres.log" \
      --options="-p $port" --wait --timeout=60 --silent >/dev/null; then
      started=true
      break
    fi
    # pg_ctl may give up while the server is still coming up: stop it.
    as_owner "$bindir/pg_ctl" stop --pgdata="$data" --mode=immediate --wait --silent 2>/dev/null || true
    if ! grep -q 'could not bind\|Address already in use' "$scratch/postgres.log" || ((attempt == 5)); then
      cat "$scratch/postgres.log" >&2 || true
      die "the server did not start"
    fi
    say "port $port was taken; trying another"
  done

  say "$("$bindir/postgres" --version) on 127.0.0.1:$port (cluster in $scratch${owner:+, run by user $owner})"
  export ENGRAM_TEST_POSTGRES_URL="postgres://engram:$password@127.0.0.1:$port/postgres"
  status=0
  "$@" || status=$?
  exit "$status"
}

main "$@"
