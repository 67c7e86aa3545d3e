#!/usr/bin/env bash
# The Debian package as a user meets it (docs/install.md, "A .deb package"): runs cpack on this build, checks the
# .deb's name and control fields, checks that its Depends names the package of every shared library the `sluice`
# binary needs and that every relation in Depends and Recommends is satisfied on this machine, then extracts the
# .deb (dpkg-deb -x) and hands its /usr to out_of_tree_example_test.sh, which builds examples/out-of-tree against
# it, runs it and links it through sluice.pc. Every step fails the test loudly, naming the step.
# Usage: deb_package_test.sh VERSION CPACK BUILD_DIR SOURCE_DIR CMAKE CXX LAUNCHER BUILD_TYPE CXX_FLAGS GENERATOR LIBDIR
# (VERSION is the project's version; from BUILD_DIR on, the arguments of out_of_tree_example_test.sh).
set -euo pipefail
version=$1; cpack=$2
shift 2
build=$1; source=$2

# The test's scratch folder (cmake/SluiceHelpers.cmake); out_of_tree_example_test.sh uses $TMPDIR/work beside it.
# Removed on success; kept for a look after a failure.
deb_work=${TMPDIR:?TMPDIR is set by ctest (sluice_test_scratch)}/deb
rm -rf "$deb_work"
mkdir -p "$deb_work"
cd "$deb_work"

fail() {
  echo "deb_package: $1" >&2
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "---- $f" >&2; tail -n 80 "$f" >&2; }
  done
  exit 1
}

# 1. cpack, into this folder (-B), not the build tree.
start=$SECONDS
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$deb_work/out" > cpack.log 2>&1 || fail "cpack failed" cpack.log
cpack_s=$((SECONDS - start))
debs=("$deb_work"/out/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made ${#debs[@]} .deb files, not one" cpack.log
deb=${debs[0]}
[ "$(basename "$deb")" = "sluice_${version}_amd64.deb" ] \
  || fail "the package is named $(basename "$deb"), not sluice_${version}_amd64.deb (Debian's <name>_<version>_<arch>)"

# 2. Control fields.
dpkg-deb -I "$deb" > info.txt 2>&1 || fail "dpkg-deb -I cannot read the package" info.txt
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = sluice ] || fail "Package is '$(field Package)', not sluice" info.txt
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', not the project's $version" info.txt
[ "$(field Architecture)" = amd64 ] || fail "Architecture is '$(field Architecture)', not amd64" info.txt
[ "$(field Section)" = devel ] || fail "Section is '$(field Section)', not devel" info.txt
[ -n "$(field Maintainer)" ] || fail "no Maintainer" info.txt
[ -n "$(field Description)" ] || fail "no Description" info.txt
depends=$(field Depends)
[ -n "$depends" ] || fail "Depends is empty" info.txt
recommends=$(field Recommends)

# The names in a relation field, one per line (alternatives and version constraints dropped).
names() { tr ',|' '\n\n' <<< "$1" | sed -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' | sed '/^$/d'; }

# 3. Extract, and check that Depends names the package of every shared library the binary needs (its NEEDED
# entries; the libraries those load are their packages' own dependencies).
root=$deb_work/root
dpkg-deb -x "$deb" "$root" > extract.log 2>&1 || fail "dpkg-deb -x failed" extract.log
[ -x "$root/usr/bin/sluice" ] || fail "the package has no /usr/bin/sluice"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
objdump -p "$root/usr/bin/sluice" | awk '$1 == "NEEDED" { print $2 }' > needed.txt
[ -s needed.txt ] || fail "objdump lists no shared library the binary needs"
names "$depends" > depends-names.txt
while read -r soname; do
  # dpkg -S prints "pkg:arch[, pkg2:arch]: /path" per file.
  owners=$(dpkg -S "*/$multiarch/$soname" 2> /dev/null | grep -v '^diversion' | sed -n 's/: \/.*//p' | tr ',' '\n' \
           | sed -e 's/^[[:space:]]*//' -e 's/:.*//' | sort -u)
  [ -n "$owners" ] || fail "no installed package holds $soname, which /usr/bin/sluice needs" needed.txt
  # A shlibs file may name a virtual package the owner provides (libspdlog1.10 provides libspdlog1.10-fmt9).
  provided=$(for o in $owners; do echo "$o"; names "$(dpkg-query -W -f='${Provides}' "$o" 2> /dev/null)"; done)
  grep -qxF -f <(echo "$provided") depends-names.txt \
    || fail "Depends lacks the package of $soname ($(echo "$provided" | tr '\n' ' '))" info.txt
done < needed.txt

# 4. Every relation in Depends and Recommends is satisfied here (scripts/setup installs them): a misspelled name or
# a version this Debian does not have fails, instead of failing at a user's apt-get install.
# The virtual packages the installed ones provide (libcurl-dev, libspdlog1.10-fmt9): they satisfy a relation
# without a version.
names "$(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' | awk -F'|' '$1 ~ /^ii/ { print $2 }' | tr '\n' ',')" \
  | sort -u > provided-here.txt
satisfied() {  # $1: one relation, "a (>= 1) | b"
  local alternative name op wanted have
  while read -r alternative; do
    name=$(sed -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' <<< "$alternative")
    have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2> /dev/null | sed -n 's/^install ok installed //p')
    if [ -z "$have" ]; then
      [[ $alternative != *'('* ]] && grep -qxF "$name" provided-here.txt && return 0
      continue
    fi
    if [[ $alternative =~ \(([<>=]+)[[:space:]]*([^\)]+)\) ]]; then
      op=${BASH_REMATCH[1]}; wanted=${BASH_REMATCH[2]}
      case $op in '>=') op=ge ;; '<=') op=le ;; '>>') op=gt ;; '<<') op=lt ;; '=') op=eq ;; esac
      dpkg --compare-versions "$have" "$op" "$wanted" || continue
    fi
    return 0
  done < <(tr '|' '\n' <<< "$1")
  return 1
}
while read -r relation; do
  [ -n "$relation" ] || continue
  satisfied "$relation" || fail "'$relation' (Depends or Recommends) is not satisfied on this machine" info.txt
done < <(printf '%s,%s' "$depends" "$recommends" | tr ',' '\n' | sed 's/^[[:space:]]*//')
echo "deb_package: $(basename "$deb"), $(stat -c %s "$deb") bytes, cpack ${cpack_s} s;" \
     "$(wc -l < depends-names.txt) packages in Depends, $(wc -l < needed.txt) shared libraries checked"

# 5. The extracted /usr as the prefix of a program built outside the tree (one way of doing that: the script of
# out_of_tree_example_it).
bash "$source/tests/integration/out_of_tree_example_test.sh" "$@" "$root/usr" \
  || fail "examples/out-of-tree against the extracted package failed (its log is above)"

echo "deb_package: ok"
cd /
rm -rf "$deb_work"
