# A Debian package of what `cmake --install` installs (docs/install.md, "A .deb package"):
#   cd build/release && cpack            # -> sluice_<version>_amd64.deb
# cpack packs the build as it is; it does not build. The package installs under /usr: the `sluice` CLI in
# /usr/bin, the headers, the static libraries, the CMake package and sluice.pc (in /usr/<libdir>, as configured).
#
# Its relations, by what each part of the package needs:
# - Depends: the shared libraries the CLI links, computed by dpkg-shlibdeps from the binary itself (so they follow
#   the libraries it was built with), and the -dev packages without which the installed CMake package cannot be used
#   at all: SluiceConfig.cmake calls find_dependency on them for every program, and the public headers include
#   spdlog, fmt, nlohmann/json and RocksDB's headers. pkg-config runs inside SluiceConfig.cmake (libxxhash, cpp-httplib: every
#   program serves its job's REST endpoint).
# - Recommends: the -dev packages of the connectors' own dependencies (Kafka, PostgreSQL, SQLite), which
#   SluiceConfig.cmake looks for only when a program asks for those connectors (or names no COMPONENTS) and which
#   sluice.pc requires; apt installs Recommends by default, --no-install-recommends leaves them out. And the tools
#   a program is built with.
# The names are Debian 12's; deb_package_it (tests/integration/deb_package_test.sh) checks that each relation is
# satisfied on the machine it runs on, where scripts/setup installed them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sluice)
set(CPACK_PACKAGE_VENDOR "Sluice")
# The project has no mailing address yet (.invalid is the reserved name for one that does not exist): whoever
# distributes the package sets theirs, -DSLUICE_DEB_MAINTAINER="Name <address>".
set(SLUICE_DEB_MAINTAINER "Sluice maintainers <maintainers@sluice.invalid>" CACHE STRING
    "The Maintainer field of the .deb (cpack)")
set(CPACK_PACKAGE_CONTACT "${SLUICE_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "stateful stream processing engine in C++20 (Flink's state model)")
# One line per line of the control file's long description (CPack indents each).
set(CPACK_PACKAGE_DESCRIPTION "\
Sluice runs dataflow jobs written against a DataStream API, with keyed state,
event-time windows, checkpoints and exactly-once sinks, on an embedded
MiniCluster or as a cluster of processes. This package holds the sluice command
line, the headers and static libraries of the engine and its connectors (file,
Kafka, PostgreSQL, SQLite, Nexmark), and the CMake and pkg-config files to build
programs against them: find_package(Sluice CONFIG REQUIRED).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The Release build carries no debug information; stripping the CLI drops its symbol table (static archives are
# left as they are: a program links them by their symbols).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>_<arch>.deb, Debian's own naming
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "\
pkg-config, libfmt-dev, libspdlog-dev, nlohmann-json3-dev (>= 3.11), libyaml-cpp-dev, librocksdb-dev, \
libprotobuf-dev, libgrpc++-dev, libcurl4-openssl-dev | libcurl-dev, libssl-dev, libpugixml-dev, libxxhash-dev, \
libcpp-httplib-dev")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "librdkafka-dev, libpqxx-dev, libsqlite3-dev, cmake (>= 3.25), g++ (>= 4:12)")

include(CPack)
