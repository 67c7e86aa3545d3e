#!/usr/bin/env bash
# Runs one job of the Flink peer on Flink's local MiniCluster (build.sh first):
#   bench/peers/flink/run.sh --job q5 --events 100000 --output out/flink-q5
# Main classes: dev.sluice.peers.flink.Jobs (default) or, with FLINK_PEER_MAIN, e.g.
# dev.sluice.peers.nexmark.PrintEvents. Maximum JVM heap: FLINK_PEER_HEAP (default 1g, -Xmx; the heap grows to what
# the job needs, so peak RSS reflects use, not the cap).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -f "$here/target/classpath.txt" ] || [ ! -d "$here/target/classes" ]; then
  echo "run.sh: not built yet; run $here/build.sh first" >&2
  exit 1
fi
heap="${FLINK_PEER_HEAP:-1g}"
# The module openings Flink's own launch scripts pass on Java 17 (Kryo and the closure cleaner reflect on JDK
# classes).
opens=()
for p in java.base/java.lang java.base/java.lang.reflect java.base/java.io java.base/java.net java.base/java.nio \
         java.base/java.util java.base/java.util.concurrent java.base/java.util.concurrent.atomic \
         java.base/java.time java.base/java.text java.base/sun.nio.ch java.base/java.lang.invoke \
         java.base/java.math java.base/java.security; do
  opens+=("--add-opens=$p=ALL-UNNAMED")
done
exec java -Xmx"$heap" "${opens[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
  -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
  "${FLINK_PEER_MAIN:-dev.sluice.peers.flink.Jobs}" "$@"
