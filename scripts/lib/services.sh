# shellcheck shell=bash
# Throwaway PostgreSQL and Redis on free loopback ports, for tests and benchmarks.
#
# Source this file, then call `services_start`. It exports DATABASE_URL and CELERY_BROKER_URL and
# registers a trap that stops both servers and removes their data when the calling shell exits,
# whatever the reason. PostgreSQL refuses to run as root, so when we are root it runs as `postgres`.
# The fault suite (tests/faults) stops and starts the servers itself, with what `services_start`
# also exports: SERVICES_PG_BINDIR, SERVICES_PGDATA, SERVICES_PG_OPTIONS, SERVICES_PG_USER (empty
# when pg_ctl runs as the current user), SERVICES_REDIS_PORT and SERVICES_ROOT.

services_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

services_install_missing() {
    local missing=()
    [ -n "$(services_pg_bindir)" ] || missing+=(postgresql)
    command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "==> installing Debian packages: ${missing[*]}" >&2
        if [ "$(id -u)" -ne 0 ]; then
            echo "error: ${missing[*]} missing and we are not root; install them first" >&2
            return 1
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

services_pg_bindir() {
    # Debian installs the server binaries outside PATH, one folder per major version.
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

services_as_pg_user() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

services_stop() {
    if [ -n "${SERVICES_PGDATA:-}" ] && [ -d "$SERVICES_PGDATA" ]; then
        services_as_pg_user "$SERVICES_PG_BINDIR/pg_ctl" -D "$SERVICES_PGDATA" -m immediate stop >/dev/null 2>&1 || true
    fi
    if [ -n "${SERVICES_REDIS_PORT:-}" ]; then
        redis-cli -p "$SERVICES_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
    fi
    [ -n "${SERVICES_ROOT:-}" ] && rm -rf "$SERVICES_ROOT"
    SERVICES_PGDATA="" SERVICES_REDIS_PORT="" SERVICES_ROOT=""
}

services_start() {
    services_install_missing || return 1
    SERVICES_PG_BINDIR=$(services_pg_bindir)
    SERVICES_ROOT=$(mktemp -d /tmp/evalproject-services.XXXXXX)
    chmod 755 "$SERVICES_ROOT"
    trap services_stop EXIT
    trap 'exit 130' INT TERM

    SERVICES_PGDATA="$SERVICES_ROOT/pgdata"
    mkdir -p "$SERVICES_PGDATA"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$SERVICES_PGDATA"
    local pg_port redis_port pg_options
    pg_port=$(services_free_port)
    services_as_pg_user "$SERVICES_PG_BINDIR/initdb" -D "$SERVICES_PGDATA" -E UTF8 --locale=C.UTF-8 \
        -U postgres --auth=trust >"$SERVICES_ROOT/initdb.log" 2>&1 \
        || { cat "$SERVICES_ROOT/initdb.log" >&2; return 1; }
    # fsync off: the data is thrown away at exit, and durability costs the test suite minutes.
    pg_options="-c listen_addresses=127.0.0.1 -p $pg_port -k $SERVICES_PGDATA -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    services_as_pg_user "$SERVICES_PG_BINDIR/pg_ctl" -D "$SERVICES_PGDATA" -w -l "$SERVICES_PGDATA/server.log" \
        -o "$pg_options" start >/dev/null || { cat "$SERVICES_PGDATA/server.log" >&2; return 1; }
    services_as_pg_user "$SERVICES_PG_BINDIR/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres evalproject

    redis_port=$(services_free_port)
    redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
        --dir "$SERVICES_ROOT" --logfile "$SERVICES_ROOT/redis.log" >/dev/null
    SERVICES_REDIS_PORT=$redis_port
    local tries=0
    until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do
        tries=$((tries + 1)); [ "$tries" -gt 50 ] && { echo "error: redis did not start" >&2; return 1; }
        sleep 0.1
    done

    export SERVICES_PG_BINDIR SERVICES_PGDATA SERVICES_REDIS_PORT SERVICES_ROOT
    export SERVICES_PG_OPTIONS="$pg_options"
    if [ "$(id -u)" -eq 0 ]; then export SERVICES_PG_USER=postgres; else export SERVICES_PG_USER=""; fi
    export DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/evalproject"
    export CELERY_BROKER_URL="redis://127.0.0.1:$redis_port/0"
    echo "==> PostgreSQL on 127.0.0.1:$pg_port, Redis on 127.0.0.1:$redis_port" >&2
}
