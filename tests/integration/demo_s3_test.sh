#!/usr/bin/env bash
# `sluice demo` with checkpoints and savepoints on S3 (docs/storage.md), against the S3 test server of the ctest
# fixture (test-infra/README.md; $SLUICE_S3_STATE_DIR/env). Each run is verified exactly once against the oracle:
#   1. heap state, checkpoints on s3://, two injected failures restored from S3;
#   2. RocksDB, incremental checkpoints on s3:// (shared files uploaded once), the same failures;
#   3. kill -9 mid-run, then `--restore latest` from s3:// at another parallelism;
#   4. stop-with-savepoint to s3://, `sluice savepoint inspect` of it, the savepoint copied to another prefix, and
#      a restore from the copy at another parallelism on the other backend;
# and `sluice checkpoint verify|inspect` read s3:// paths, an unsupported scheme is refused naming it.
set -euo pipefail
sluice=$1
. "$(dirname "$0")/demo_job.sh"
enter_demo_workdir
fail() { echo "FAIL: $*"; for f in *.out; do echo "--- $f:"; tail -n 30 "$f"; done; exit 1; }

[ -n "${SLUICE_S3_STATE_DIR:-}" ] && [ -f "$SLUICE_S3_STATE_DIR/env" ] || fail "no S3 test server (SLUICE_S3_STATE_DIR)"
# shellcheck disable=SC1091
. "$SLUICE_S3_STATE_DIR/env"
base="s3://$SLUICE_S3_BUCKET/demo-s3-$$-$RANDOM"
s3=(-D "s3.endpoint=$SLUICE_S3_ENDPOINT" -D s3.path.style.access=true -D "s3.access-key=$SLUICE_S3_ACCESS_KEY"
    -D "s3.secret-key=$SLUICE_S3_SECRET_KEY" -D s3.retry.interval=20ms)
verified() { grep -q '"verified": true' "$1" || fail "$1: not verified"; }

# 1. Heap state, failures restored from S3.
"$sluice" demo --events 2000000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir "$base/heap" \
  --inject-failures 2 --seed 3 --output out-heap "${s3[@]}" --verify --summary-json heap.json > heap.out 2>&1 \
  || fail "demo with checkpoints on S3"
verified heap.json
grep -q '"restarts": 2' heap.json || fail "expected 2 restarts"
sed -n '/"restored_from"/,/]/p' heap.json | grep -Eq '^ *[1-9][0-9]*,?$' || fail "no recovery restored from S3"
grep -q "$SLUICE_S3_SECRET_KEY" heap.out heap.json && fail "the secret key was printed"

# 2. RocksDB with incremental checkpoints on S3.
"$sluice" demo --events 300000 --parallelism 2 --checkpoint-interval 100ms --checkpoint-dir "$base/inc" \
  --inject-failures 2 --seed 3 --output out-inc -D state.backend.type=rocksdb \
  -D execution.checkpointing.incremental=true -D state.backend.rocksdb.localdir="$work/rocks" "${s3[@]}" \
  --verify --summary-json inc.json > inc.out 2>&1 || fail "RocksDB incremental demo on S3"
verified inc.json
python3 - inc.json <<'PY' || fail "incremental sizes"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["checkpoints_completed"] > 0, "no checkpoint completed"
assert 0 < s["checkpointed_size_bytes"] <= s["checkpoint_size_bytes"], "checkpointed size must be in (0, full size]"
PY

# 3. kill -9, then --restore latest from S3 at another parallelism.
events=2000000
start_demo --events $events --parallelism 2 --checkpoint-interval 200ms --checkpoint-dir "$base/kill" \
  --output out-kill "${s3[@]}"
for _ in $(seq 1 600); do
  "$sluice" checkpoint verify "$base/kill" "${s3[@]}" > verify-kill.out 2>&1 && break
  sleep 0.1
done
grep -q "checkpoints\? verified, 0 problems" verify-kill.out || fail "no verified checkpoint on S3 before the kill"
kill -9 "$demo_pid"; wait "$demo_pid" 2>/dev/null || true; demo_pid=
"$sluice" checkpoint inspect "$base/kill" "${s3[@]}" > inspect-kill.out 2>&1 || fail "checkpoint inspect of s3://"
contains inspect-kill completed
"$sluice" demo --events $events --parallelism 3 --checkpoint-interval 200ms --checkpoint-dir "$base/kill" \
  --output out-kill "${s3[@]}" --restore latest --verify > restored-kill.out 2>&1 || fail "restore latest from S3"
contains restored-kill "verified: OK"

# 4. Stop with a savepoint on S3, inspect it, copy it to another prefix, restore the copy on RocksDB at p=3.
start_demo --events $events --parallelism 2 --checkpoint-interval 1h --checkpoint-dir "$base/sp-ck" \
  --output out-sp "${s3[@]}"
expect 0 stop "$sluice" stop "${job_id:0:7}" --savepoint-dir "$base/savepoints"
sp=$(sed -n 's/^Job stopped; savepoint stored in //p' stop.out)
case "$sp" in "$base/savepoints/"*) ;; *) fail "the savepoint is not on S3: '$sp'";; esac
rc=0; wait "$demo_pid" || rc=$?; demo_pid=
[ "$rc" = 0 ] || fail "the stopped demo exited with $rc"
expect 0 sp-inspect "$sluice" savepoint inspect "$sp" "${s3[@]}"
contains sp-inspect "every state file is present and intact"
python3 - "$SLUICE_S3_STATE_DIR" "$SLUICE_S3_BUCKET" "${sp#s3://$SLUICE_S3_BUCKET/}" "${base#s3://$SLUICE_S3_BUCKET/}/copied-savepoint" <<'PY' || fail "copying the savepoint"
# Copies every object of the savepoint to another prefix through the S3 API (curl, signed), as a user would with
# `aws s3 cp --recursive`.
import os, subprocess, sys, re, urllib.parse
state, bucket, src, dst = sys.argv[1:]
env = dict(l.replace("export ", "", 1).strip().split("=", 1) for l in open(os.path.join(state, "env")) if "=" in l)
ep, user = env["SLUICE_S3_ENDPOINT"], env["SLUICE_S3_ACCESS_KEY"] + ":" + env["SLUICE_S3_SECRET_KEY"]
sig = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", user, "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-sf"]
# curl signs the query as written: parameters sorted by name, values fully encoded.
prefix = urllib.parse.quote(src + "/", safe="")
listing = subprocess.check_output(["curl", *sig, f"{ep}/{bucket}?list-type=2&prefix={prefix}"]).decode()
keys = re.findall(r"<Key>([^<]+)</Key>", listing)
keys = [k for k in keys if not k.endswith("/")]
assert any(k.endswith("/_metadata") for k in keys), listing
for k in keys:
    body = subprocess.check_output(["curl", *sig, f"{ep}/{bucket}/{k}"])
    subprocess.run(["curl", *sig, "-X", "PUT", "--data-binary", "@-", f"{ep}/{bucket}/{dst}/{k[len(src) + 1:]}"],
                   input=body, check=True)
PY
"$sluice" demo --events $events --parallelism 3 --checkpoint-interval 1h --checkpoint-dir "$base/sp-ck" \
  --output out-sp -D state.backend.type=rocksdb --restore "$base/copied-savepoint" "${s3[@]}" --verify \
  > restored-sp.out 2>&1 || fail "restore of the copied savepoint from S3"
contains restored-sp "verified: OK"

# Unsupported schemes are refused, naming them.
rc=0; "$sluice" demo --events 1000 --checkpoint-dir hdfs:///ck --output out-x > hdfs.out 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "hdfs:// was accepted"
contains hdfs "unsupported URI scheme 'hdfs'"
[ ! -e "hdfs:" ] || fail "a local folder named 'hdfs:' was created"
echo "demo on S3: verified"
