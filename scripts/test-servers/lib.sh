# Shared helpers of the test-server scripts (sourced, not run).

ts_log() { echo "$(basename "$0"): $*" >&2; }
ts_die() { ts_log "ERROR: $*"; exit 1; }

# ts_free_port: prints a TCP port that was free on 127.0.0.1 a moment ago (the kernel picks it). Another process
# may take it before the server binds it; the start scripts then fail with the server's own bind error.
ts_free_port() {
  ts_free_ports 1
}

# ts_free_ports N: prints N distinct such ports, one a line (held open together while the kernel picks them).
ts_free_ports() {
  python3 -c 'import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# ts_port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
ts_port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ts_running PID: true while the process exists and is not a zombie (in a container whose PID 1 reaps no
# children, a stopped server can stay a zombie, which kill -0 still reports as alive).
ts_running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# ts_pid_alive PIDFILE: true when the file names a running process.
ts_pid_alive() {
  [ -s "$1" ] && ts_running "$(cat "$1")"
}

# ts_stop_pid PIDFILE GRACE_S: SIGTERM, then SIGKILL after GRACE_S seconds; waits until the process is gone.
ts_stop_pid() {
  local pidfile=$1 grace=$2 pid i
  ts_pid_alive "$pidfile" || return 0
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    ts_running "$pid" || return 0
    sleep 0.1
  done
  ts_log "pid $pid still running after ${grace}s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    ts_running "$pid" || return 0
    sleep 0.1
  done
}

# ts_fetch_jars WHAT NAME POM VERSION LOG: the runtime jars of the Maven project POM (the server WHAT at VERSION)
# in $SLUICE_CACHE_DIR/NAME-VERSION/libs (default cache ${XDG_CACHE_HOME:-$HOME/.cache}/sluice), fetched once per
# version with `mvn dependency:copy-dependencies`; prints that folder.
# One fetch at a time per cache (several build trees, or scripts/test-servers/fetch while a fixture starts).
# Returns 3 when Maven Central cannot be reached (LOG holds Maven's output), dies on any other failure (a wrong
# pom, a missing artifact). SLUICE_MVN_ARGS: extra Maven arguments (e.g. "-o" to check the skip path).
ts_fetch_jars() {
  local what=$1 name=$2 pom=$3 version=$4 log=$5 cache libs rc=0
  cache=${SLUICE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}/$name-$version
  libs=$cache/libs
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  if [ ! -f "$libs/.complete" ]; then
    command -v mvn >/dev/null || ts_die "mvn not found (scripts/setup installs maven)"
    rm -rf "$libs.tmp"
    ts_log "fetching $what $version with Maven into $libs"
    # shellcheck disable=SC2086 # SLUICE_MVN_ARGS is a list of arguments
    if mvn -B ${SLUICE_MVN_ARGS:-} -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$libs.tmp" >"$log" 2>&1; then
      rm -rf "$libs"
      mv "$libs.tmp" "$libs"
      touch "$libs/.complete"
    elif grep -Eq 'UnknownHostException|Connection refused|Connect to .* failed|connect timed out|Network is unreachable|No route to host|Could not transfer artifact|offline mode' "$log"; then
      rc=3  # a network failure: the caller skips its tests
    else
      tail -n 30 "$log" >&2
      ts_die "mvn could not resolve $what $version (see $log)"
    fi
  fi
  flock -u 9
  exec 9>&-
  [ "$rc" -eq 0 ] && echo "$libs"
  return "$rc"
}

# ts_python_tools LOG: a virtual environment with the Python test tools of test-infra/python/requirements.txt (from
# PyPI) in $SLUICE_CACHE_DIR/python-tools-<hash of that file>, made once per version of the file; prints its bin
# folder. Returns 3 when PyPI cannot be reached (LOG holds pip's output), dies on any other failure.
ts_python_tools() {
  local log=$1 requirements venv rc=0
  requirements=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/test-infra/python/requirements.txt
  venv=${SLUICE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}/python-tools-$(sha256sum "$requirements" | cut -c1-12)
  mkdir -p "$(dirname "$venv")"
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    ts_log "installing the Python test tools of $requirements into $venv"
    if python3 -m venv "$venv" >"$log" 2>&1 &&
        "$venv/bin/pip" install --disable-pip-version-check -q -r "$requirements" >>"$log" 2>&1; then
      touch "$venv/.complete"
    elif grep -Eq 'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|No matching distribution found' "$log"; then
      rm -rf "$venv"
      rc=3
    else
      tail -n 30 "$log" >&2
      rm -rf "$venv"
      ts_die "could not install the Python test tools (see $log; Debian's python3-venv comes with scripts/setup)"
    fi
  fi
  flock -u 8
  exec 8>&-
  [ "$rc" -eq 0 ] && echo "$venv/bin"
  return "$rc"
}
