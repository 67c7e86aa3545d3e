#!/usr/bin/env bash
# The PostgreSQL test server is up and does two-phase commit: max_prepared_transactions > 0, a prepared
# transaction is listed in pg_prepared_xacts and its row becomes visible only at COMMIT PREPARED.
set -euo pipefail
conninfo=${SLUICE_PG_CONNINFO:-$(cat "${SLUICE_PG_STATE_DIR:?set SLUICE_PG_STATE_DIR or SLUICE_PG_CONNINFO}/conninfo")}
q() { psql "$conninfo" -v ON_ERROR_STOP=1 -Atqc "$1"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

max=$(q "SHOW max_prepared_transactions")
[ "$max" -gt 0 ] || fail "max_prepared_transactions is $max"
gid="sluice-smoke-$$-$RANDOM"
table="smoke_$$_$RANDOM"
q "CREATE TABLE $table (k int PRIMARY KEY)"
psql "$conninfo" -v ON_ERROR_STOP=1 -Atq <<SQL
BEGIN;
INSERT INTO $table VALUES (1);
PREPARE TRANSACTION '$gid';
SQL
[ "$(q "SELECT count(*) FROM pg_prepared_xacts WHERE gid = '$gid'")" = 1 ] || fail "$gid not prepared"
[ "$(q "SELECT count(*) FROM $table")" = 0 ] || fail "a prepared row is visible before COMMIT PREPARED"
q "COMMIT PREPARED '$gid'"
[ "$(q "SELECT count(*) FROM $table")" = 1 ] || fail "the row is not visible after COMMIT PREPARED"
q "DROP TABLE $table"
echo "postgres smoke: max_prepared_transactions=$max, PREPARE / COMMIT PREPARED ok"
