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

# ts_cache_install WHAT DIR LOG NETWORK_RE CMD...: runs CMD, which installs WHAT into DIR, once per DIR (a folder
# of the test cache named by a hash of what it installs), one install at a time. Returns 3 when CMD failed and LOG
# (its output) matches NETWORK_RE, a registry out of reach; dies naming LOG on any other failure.
ts_cache_install() {
  local what=$1 dir=$2 log=$3 network=$4 rc=0
  shift 4
  mkdir -p "$(dirname "$dir")"
  exec 8>"$dir.lock"
  flock 8
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    ts_log "installing $what into $dir"
    if "$@" >"$log" 2>&1; then
      touch "$dir/.complete"
    elif grep -Eq "$network" "$log"; then
      rm -rf "$dir"
      rc=3
    else
      tail -n 30 "$log" >&2
      rm -rf "$dir"
      ts_die "could not install $what (see $log)"
    fi
  fi
  flock -u 8
  exec 8>&-
  return "$rc"
}

_ts_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }
_ts_cache() { echo "${SLUICE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"; }
_ts_pip_install() { python3 -m venv "$1" && "$1/bin/pip" install --disable-pip-version-check -q -r "$2"; }
_ts_npm_install() {
  mkdir -p "$1" && cp "$2" "$1/package.json" &&
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$1" --no-audit --no-fund --no-save
}

# ts_python_tools LOG: a virtual environment with the Python test tools of test-infra/python/requirements.txt (from
# PyPI; Debian's python3-venv comes with scripts/setup), made once per version of that file; prints its bin folder.
# Returns 3 when PyPI cannot be reached.
ts_python_tools() {
  local requirements venv
  requirements=$(_ts_root)/test-infra/python/requirements.txt
  venv=$(_ts_cache)/python-tools-$(sha256sum "$requirements" | cut -c1-12)
  ts_cache_install "the Python test tools of $requirements" "$venv" "$1" \
    'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|No matching distribution found' \
    _ts_pip_install "$venv" "$requirements" || return
  echo "$venv/bin"
}

# ts_node_tools LOG: the npm packages of test-infra/browser/package.json (from the npm registry: Playwright's library,
# which drives Debian's Chromium - never a downloaded browser), installed once per version of that file; prints its
# node_modules folder. Returns 3 when the registry cannot be reached.
ts_node_tools() {
  local manifest dir
  command -v npm >/dev/null || ts_die "npm not found (scripts/setup installs Node.js and npm)"
  manifest=$(_ts_root)/test-infra/browser/package.json
  dir=$(_ts_cache)/node-tools-$(sha256sum "$manifest" | cut -c1-12)
  ts_cache_install "the npm test tools of $manifest" "$dir" "$1" 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENETUNREACH' \
    _ts_npm_install "$dir" "$manifest" || return
  echo "$dir/node_modules"
}

# ts_tools_or_skip NAME FN WHAT LOG: runs FN LOG (ts_python_tools or ts_node_tools) and stores what it prints in the
# variable NAME. When the registry cannot be reached, says so and exits 77 (the skip code of the tests that use
# it); any other failure fails the test.
ts_tools_or_skip() {
  local name=$1 fn=$2 what=$3 log=$4 out rc=0
  out=$("$fn" "$log") || rc=$?
  if [ "$rc" = 3 ]; then
    echo "SKIP: the registry of $what cannot be reached:"
    tail -n 5 "$log"
    exit 77
  fi
  [ "$rc" = 0 ] || ts_die "installing $what (see $log)"
  printf -v "$name" '%s' "$out"
}
