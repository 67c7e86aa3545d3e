#!/usr/bin/env bash
# The exactly-once file sink writing to s3:// (`sluice demo --output s3://...`, docs/storage.md "File sink on S3")
# under seeded failures leaves no multipart upload open once the job finished, and its output is verified exactly
# once. Guards the outcome of a race: a build whose file sink sent parts in the background without waiting for
# them when a failing task gave its file up left one upload open in 5 of 10 manual runs (seeds 13-16, 10 M events);
# not reproducible on demand, so s3_recoverable_writer_it checks the wait itself.
# Usage: demo_s3_sink_uploads_test.sh SLUICE [SEEDS [EVENTS]]   (on the ctest fixture's S3 server; ~15 s)
set -euo pipefail
sluice=$1
seeds=${2:-13,14,16}
events=${3:-2000000}
. "$(dirname "$0")/demo_s3_lib.sh"
enter_demo_workdir
use_fixture_s3_server
prefix="demo-s3-sink-uploads-$$-$RANDOM"

for seed in ${seeds//,/ }; do
  run="seed-$seed"
  "$sluice" demo --events "$events" --parallelism 2 --seed "$seed" --inject-failures 3 \
    --output "s3://$SLUICE_S3_BUCKET/$prefix/out-$seed" --checkpoint-dir "s3://$SLUICE_S3_BUCKET/$prefix/ck-$seed" \
    "${s3[@]}" --verify --summary-json "$run.json" > "$run.out" 2>&1 || fail "$run: the demo writing to S3"
  verified "$run.json"
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["restarts"] == 3, s["restarts"]' \
    "$run.json" || fail "$run: expected 3 restarts"
  uploads=$(s3_request GET "?prefix=$prefix%2Fout-$seed%2F&uploads=" | grep -o '<Key>[^<]*</Key>' || true)
  [ -z "$uploads" ] || fail "$run: multipart uploads left open after the job finished: $uploads"
  echo "$run: verified, no open upload"
done
echo "file sink on S3 under seeded failures: no open upload left"
