# Sourced by the CLI tests that control a running demo. start_demo ARGS...: starts `$sluice demo ARGS` in the
# background (output in demo.out), sets demo_pid, waits until `sluice list` shows it and sets job_line (its line)
# and job_id. Needs $sluice and a fail function; the caller's XDG_RUNTIME_DIR keeps the registry its own.
# expect RC NAME CMD...: runs CMD into NAME.out and fails unless it exits RC; contains NAME TEXT: NAME.out has TEXT.
# enter_demo_workdir: a fresh $work (removed at exit, with a demo still running killed), entered, with a job
# registry of its own (XDG_RUNTIME_DIR).
enter_demo_workdir() {
  work=$(mktemp -d)
  demo_pid=
  trap 'if [ -n "$demo_pid" ]; then kill -9 "$demo_pid" 2>/dev/null; fi; rm -rf "$work"' EXIT
  cd "$work"
  export XDG_RUNTIME_DIR="$work/run"
  mkdir -p "$XDG_RUNTIME_DIR"
}
expect() {
  local want=$1 name=$2; shift 2
  local rc=0; "$@" > "$name.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want"
}
contains() { grep -qF -- "$2" "$1.out" || fail "$1: no '$2'"; }
start_demo() {
  "$sluice" demo "$@" > demo.out 2>&1 &
  demo_pid=$!
  job_line=
  for _ in $(seq 1 3000); do
    job_line=$("$sluice" list 2>/dev/null | head -n 1)
    [ -n "$job_line" ] && break
    kill -0 "$demo_pid" 2>/dev/null || fail "the demo ended before it registered"
    sleep 0.05
  done
  [ -n "$job_line" ] || fail "sluice list never showed the demo"
  job_id=$(echo "$job_line" | awk '{print $1}')
}
