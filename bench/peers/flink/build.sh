#!/usr/bin/env bash
# Builds the Flink peer (bench/peers/flink): compiled classes in target/classes and the runtime classpath in
# target/classpath.txt (run.sh starts Java with both).
#
#   bench/peers/flink/build.sh            offline if everything is cached, else one online fetch first
#   bench/peers/flink/build.sh --fetch    resolve every dependency and plugin from Maven Central (online)
#   bench/peers/flink/build.sh --offline  never touch the network (fails if something is missing)
#
# Local repository: $SLUICE_M2_REPO if set, else ~/.m2/repository (Maven's default, so several worktrees share
# the ~230 MB of Flink jars). Exit codes: 0 built; 3 the dependencies are not cached and Maven Central cannot be
# reached (callers such as the peers ctest skip on it); anything else a real build failure.
set -euo pipefail
cd "$(dirname "$0")"
REPO="${SLUICE_M2_REPO:-$HOME/.m2/repository}"
MVN=(mvn -B -q -Dmaven.repo.local="$REPO")
# The probe URL can be overridden (SLUICE_MAVEN_CENTRAL_PROBE) to exercise the skip path in a test.
CENTRAL="${SLUICE_MAVEN_CENTRAL_PROBE:-https://repo.maven.apache.org/maven2/}"

if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
  echo "build.sh: mvn and java 17 are needed (scripts/setup installs openjdk-17-jdk-headless and maven)" >&2
  exit 1
fi

central_reachable() {
  if command -v curl >/dev/null; then
    curl -sS -m 15 -o /dev/null -I "$CENTRAL" 2>/dev/null
  else
    timeout 15 bash -c 'exec 3<>/dev/tcp/repo.maven.apache.org/443' 2>/dev/null
  fi
}

fetch() {
  if ! central_reachable; then
    echo "build.sh: Maven Central ($CENTRAL) cannot be reached and the Flink jars are not all in $REPO" >&2
    exit 3
  fi
  "${MVN[@]}" dependency:go-offline
}

mode="${1:-auto}"
case "$mode" in
  --fetch) fetch; exec "${MVN[@]}" -o package ;;
  --offline) exec "${MVN[@]}" -o package ;;
  auto)
    log="$(mktemp)"
    trap 'rm -f "$log"' EXIT
    if "${MVN[@]}" -o package >"$log" 2>&1; then exit 0; fi
    # Offline failed: missing artifacts (fetch once, then build offline) or a real compile error (shown).
    if grep -q -E "offline mode|has not been downloaded" "$log"; then
      fetch
      "${MVN[@]}" -o package
      exit 0
    fi
    cat "$log" >&2
    exit 1
    ;;
  *) echo "build.sh: unknown argument '$mode'; expected --fetch or --offline" >&2; exit 2 ;;
esac
