#!/usr/bin/env bash
# A user's view of the installed package (docs/install.md): installs this build into a fresh prefix, copies
# examples/out-of-tree out of the source tree, configures it against the prefix with find_package(Sluice) alone
# (same compiler, launcher, build type and flags as this build), builds it, runs it - a clean run and one with
# an injected failure - and compares the committed output with an independent count of the input. Also links the
# example's object file through sluice.pc (pkg-config). Every step fails the test loudly, naming the step.
# Usage: out_of_tree_example_test.sh BUILD_DIR SOURCE_DIR CMAKE CXX LAUNCHER BUILD_TYPE CXX_FLAGS GENERATOR LIBDIR
#        [PREFIX]
# (LAUNCHER and CXX_FLAGS may be empty; LIBDIR is CMAKE_INSTALL_LIBDIR). With PREFIX, the example is built against
# that prefix, already filled by the caller (deb_package_test.sh: the extracted .deb), instead of a fresh install.
# Prints how long the example took to configure and build.
set -euo pipefail
build=$1; source=$2; cmake=$3; cxx=$4; launcher=$5; build_type=$6; cxx_flags=$7; generator=$8; libdir=$9
given_prefix=${10:-}

# A fixed folder (the test's scratch folder, cmake/SluiceHelpers.cmake): the same paths on every run let a
# compiler cache reuse the example's object file. Removed on success; kept for a look after a failure.
work=${TMPDIR:?TMPDIR is set by ctest (sluice_test_scratch)}/work
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() {
  echo "out_of_tree_example: $1" >&2
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "---- $f" >&2; tail -n 80 "$f" >&2; }
  done
  exit 1
}

# 1. Install (DESTDIR from the caller's environment would move it elsewhere), unless the caller gave a prefix.
if [ -n "$given_prefix" ]; then
  prefix=$(realpath "$given_prefix")
  echo "prefix given: $prefix" > install.log
else
  unset DESTDIR
  prefix=$work/prefix
  "$cmake" --install "$build" --prefix "$prefix" > install.log 2>&1 || fail "cmake --install failed" install.log
fi
for f in bin/sluice include/sluice/sluice.h include/sluice/connectors/file/transactional_file_sink.h \
         "$libdir/libsluice.a" "$libdir/libsluice_file.a" "$libdir/cmake/Sluice/SluiceConfig.cmake" \
         "$libdir/cmake/Sluice/SluiceConfigVersion.cmake" "$libdir/cmake/Sluice/SluiceTargets.cmake" \
         "$libdir/pkgconfig/sluice.pc"; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f" install.log
done
"$prefix/bin/sluice" --help > cli-help.txt 2>&1 || fail "the installed sluice CLI does not run" cli-help.txt

# 2. Configure and build the example outside the tree, against the prefix only.
cp -r "$source/examples/out-of-tree" "$work/src"
args=(-S "$work/src" -B "$work/build" -G "$generator" -DCMAKE_BUILD_TYPE="$build_type" -DCMAKE_CXX_COMPILER="$cxx"
      -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if [ -n "$launcher" ]; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"); fi
start=$SECONDS
"$cmake" "${args[@]}" > configure.log 2>&1 || fail "configuring the example against the prefix failed" configure.log
configure_s=$((SECONDS - start))
found=$(sed -n 's/^Sluice_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[ "$found" = "$prefix/$libdir/cmake/Sluice" ] || fail "find_package(Sluice) found '$found', not the fresh install"
start=$SECONDS
"$cmake" --build "$work/build" > build.log 2>&1 || fail "building the example against the prefix failed" build.log
build_s=$((SECONDS - start))
echo "out_of_tree_example: configure ${configure_s} s, build ${build_s} s (build type $build_type${launcher:+, $launcher})"
# No header from the source or build tree: include paths lead to the prefix or the scratch folder (both may lie in
# the build tree's test-tmp/), or elsewhere.
python3 - "$work/build/compile_commands.json" "$work" "$prefix" "$source" "$build" <<'PY' \
  || fail "the example compiled against the source or build tree"
import json, os, shlex, sys
commands = json.load(open(sys.argv[1]))
allowed = [os.path.realpath(p) for p in sys.argv[2:4]]
trees = [os.path.realpath(p) for p in sys.argv[4:]]
inside = lambda path, tree: path == tree or path.startswith(tree + os.sep)
for c in commands:
    args = shlex.split(c["command"])
    for i, a in enumerate(args):
        for flag in ("-I", "-isystem", "-iquote"):
            if a == flag or (a.startswith(flag) and len(a) > len(flag)):
                path = args[i + 1] if a == flag else a[len(flag):]
                real = os.path.realpath(path)
                if not any(inside(real, ok) for ok in allowed) and any(inside(real, t) for t in trees):
                    sys.exit("include path %s is inside %s" % (path, trees))
PY

# 3. Run: 30000 lines of words from a small vocabulary, in mixed case with punctuation, over two files. About
# 0.1 s of work at parallelism 2, so checkpoints every 10 ms complete during it: the injected failure at line 20000
# comes after the first of them in about half the runs (a restore from it) and before it in the others (a restart
# from the start). Either way the output must be exactly the expected lines.
python3 - <<'PY'
import os, random
rng = random.Random(7)
words = ["stream", "state", "Barrier", "sluice", "flink", "key", "group", "sink", "commit", "epoch", "x1", "y2"]
for name, lines in (("in/a.txt", 20000), ("in/more/b.txt", 10000)):
    os.makedirs(os.path.dirname(name), exist_ok=True)
    with open(name, "w") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choice(words) + rng.choice(["", "", ",", "."]) for _ in range(rng.randint(0, 9))) + "\n")
PY
# The expected lines, counted independently: per occurrence "word,n", n the count so far (C-locale alnum words,
# lower-cased, as the program's tokenizer splits them).
cat in/a.txt in/more/b.txt | LC_ALL=C awk '{
  s = tolower($0); gsub(/[^a-z0-9]+/, " ", s); n = split(s, w, " ")
  for (i = 1; i <= n; ++i) print w[i] "," ++count[w[i]]
}' | LC_ALL=C sort > expected.txt
[ "$(wc -l < expected.txt)" -gt 100000 ] || fail "the generated input is too small: $(wc -l < expected.txt) words"

check_output() {  # $1: run name, $2: output folder, $3: log
  shopt -s nullglob dotglob
  local files=("$2"/*)
  shopt -u nullglob dotglob
  [ ${#files[@]} -gt 0 ] || fail "$1: no files in $2" "$3"
  for f in "${files[@]}"; do
    case $(basename "$f") in
      part-*) ;;
      *) fail "$1: an unexpected file in the output folder: $f (an uncommitted part file, or the folder's lock left behind?)" "$3" ;;
    esac
  done
  cat "$2"/part-* | LC_ALL=C sort > "$1.got"
  cmp -s expected.txt "$1.got" || {
    diff expected.txt "$1.got" | head -n 20 >&2
    fail "$1: the committed output differs from the expected counts ($(wc -l < "$1.got") lines, $(wc -l < expected.txt) expected)" "$3"
  }
}
common=(-D parallelism.default=2 -D execution.checkpointing.interval=10ms -D restart-strategy.type=fixed-delay
        -D restart-strategy.fixed-delay.attempts=3 -D restart-strategy.fixed-delay.delay=50ms)
"$work/build/word_count" --input in/a.txt --input in/more --output out-clean "${common[@]}" \
  -D execution.checkpointing.dir="$work/checkpoints" > clean.log 2>&1 \
  || fail "the clean run failed" clean.log
grep -q ': FINISHED in ' clean.log || fail "the clean run did not report FINISHED" clean.log
grep -q 'Completed checkpoint' clean.log || fail "the clean run completed no checkpoint" clean.log
check_output clean out-clean clean.log
"$work/build/word_count" --input in/a.txt --input in/more --output out-failure --fail-once-after-lines 20000 \
  "${common[@]}" -D execution.checkpointing.dir="$work/checkpoints" > failure.log 2>&1 || fail "the run with an injected failure failed" failure.log
grep -q 'injected failure at line 20000' failure.log || fail "the injected failure did not happen" failure.log
grep -Eq "job word-count: restarting, attempt 1, from (checkpoint [0-9]+ at |the beginning)" failure.log \
  || fail "the restart is not announced in the log" failure.log
grep -q ': FINISHED in ' failure.log || fail "the run with an injected failure did not report FINISHED" failure.log
check_output failure out-failure failure.log

# 4. pkg-config: the example's object file linked with `pkg-config --libs sluice` alone, then run.
object=$(find "$work/build" -name 'main.cc.o' | head -n 1)
[ -n "$object" ] || fail "no object file of the example"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pc_libs=$(pkg-config --libs sluice 2> pc.log) || fail "pkg-config --libs sluice failed" pc.log
pc_include=$(pkg-config --cflags-only-I sluice | tr ' ' '\n' | sed -n 's/^-I//p' | head -n 1)
[ "$(realpath -m "$pc_include")" = "$prefix/include" ] \
  || fail "pkg-config --cflags sluice names '$pc_include', not $prefix/include"
# shellcheck disable=SC2086  # pc_libs is a list of flags
"$cxx" $cxx_flags "$object" -o word_count_pc $pc_libs > pc-link.log 2>&1 \
  || fail "linking the example with pkg-config --libs sluice failed" pc-link.log
# Without execution.checkpointing.dir: the example keeps its checkpoints beside the output, with no warning that
# they would live in memory only.
./word_count_pc --input in/a.txt --input in/more --output out-pc/ "${common[@]}" > pc.log 2>&1 \
  || fail "the pkg-config-linked program failed" pc.log
check_output pc out-pc pc.log
grep -q 'Completed checkpoint .* at .*out-pc-checkpoints/' pc.log \
  || fail "no checkpoint completed in the example's default folder out-pc-checkpoints" pc.log
! grep -q 'no checkpoint folder' pc.log || fail "the example warned that its checkpoints live in memory" pc.log

echo "out_of_tree_example: ok ($(wc -l < expected.txt) lines, exactly once in every run)"
cd /
rm -rf "$work"
