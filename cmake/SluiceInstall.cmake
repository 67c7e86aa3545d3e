# Install rules and the exported CMake package (docs/install.md):
#   cmake --install build/release --prefix P
# puts the public headers in P/include/sluice/, the static libraries in P/lib/, the `sluice` CLI in P/bin/, and
# SluiceConfig.cmake, its version file and the exported targets in P/lib/cmake/Sluice/, so that a program outside
# this tree builds with find_package(Sluice CONFIG REQUIRED) and links Sluice::sluice (+ Sluice::file, ...).
# A sluice.pc for pkg-config goes to P/lib/pkgconfig/.
#
# The package is made with CMake's own machinery ("cmake-packages(7)": install(EXPORT), configure_package_config_file,
# write_basic_package_version_file). Every library is static, and a static library's private dependencies are link
# dependencies of whoever links it (CMake exports them as $<LINK_ONLY:...>): so every library the user-facing ones
# reach is installed and exported too. install(EXPORT) refuses to generate when a library reached that way is
# missing from the lists below, so a new internal library cannot be forgotten silently.
include(CMakePackageConfigHelpers)

set(SLUICE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Sluice)

# What a user program links, by the names it uses: Sluice::sluice and one target per connector.
set_target_properties(sluice_file PROPERTIES EXPORT_NAME file)
set_target_properties(sluice_kafka PROPERTIES EXPORT_NAME kafka)
set_target_properties(sluice_postgres PROPERTIES EXPORT_NAME postgres)
set_target_properties(sluice_sqlite PROPERTIES EXPORT_NAME sqlite)
set_target_properties(sluice_nexmark PROPERTIES EXPORT_NAME nexmark)
set_target_properties(sluice_nexmark_reference PROPERTIES EXPORT_NAME nexmark_reference)
set(SLUICE_USER_TARGETS sluice sluice_file sluice_kafka sluice_postgres sluice_sqlite sluice_nexmark
    sluice_nexmark_reference)

# The engine's libraries those reach (exported as Sluice::sluice_<name>; a user program does not name them).
# sluice_warnings is an empty target outside the build tree (see the top-level CMakeLists.txt).
set(SLUICE_INTERNAL_TARGETS sluice_core sluice_fs sluice_fs_config sluice_s3 sluice_config sluice_logging sluice_restart
    sluice_metrics sluice_graph sluice_state sluice_checkpoint sluice_network sluice_network_tcp sluice_runtime
    sluice_coordinator sluice_cluster sluice_rpc sluice_rest sluice_batch sluice_postgres_sql sluice_warnings)

install(TARGETS ${SLUICE_USER_TARGETS} ${SLUICE_INTERNAL_TARGETS} EXPORT SluiceTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sluice DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS sluice_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# `cmake --build ... --target sluice_package`: everything the install rules above install, and nothing else (no
# tests, benchmarks or examples): what scripts/run-demo builds, so that `cmake --install` works after it.
set(_sluice_package_targets ${SLUICE_USER_TARGETS} ${SLUICE_INTERNAL_TARGETS} sluice_cli)
list(REMOVE_ITEM _sluice_package_targets sluice_warnings)  # an interface target: nothing to build
add_custom_target(sluice_package)
add_dependencies(sluice_package ${_sluice_package_targets})

install(EXPORT SluiceTargets NAMESPACE Sluice:: DESTINATION ${SLUICE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SluiceConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/SluiceConfig.cmake
                              INSTALL_DESTINATION ${SLUICE_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may change the API (semver's rule for 0.y.z), so 0.1.x accepts only 0.1.x.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SluiceConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/SluiceConfig.cmake ${PROJECT_BINARY_DIR}/SluiceConfigVersion.cmake
        DESTINATION ${SLUICE_INSTALL_CMAKEDIR})

# sluice.pc for pkg-config. The libraries are static archives, so the link line must name each before the ones it
# uses (ld reads an archive once, left to right), and every dependency goes into Requires, not Requires.private:
# `pkg-config --libs` leaves out the private ones unless --static, yet a static archive's dependencies are the
# program's own. The order comes from the targets' LINK_LIBRARIES (a depth-first walk, reversed), and each
# dependency maps to its Debian pkg-config module below; a dependency with no mapping stops the configure, so the
# file cannot silently go stale. Its prefix is ${pcfiledir}-relative (pkg-config(1)), as the install prefix is
# chosen at install time (--prefix).
set(_sluice_pc_modules
  fmt::fmt=fmt spdlog::spdlog=spdlog nlohmann_json::nlohmann_json=nlohmann_json yaml-cpp=yaml-cpp
  RocksDB::rocksdb-shared=rocksdb protobuf::libprotobuf=protobuf gRPC::grpc++=grpc++ CURL::libcurl=libcurl
  OpenSSL::Crypto=libcrypto pugixml::pugixml=pugixml PkgConfig::XXHASH=libxxhash PkgConfig::RDKAFKA=rdkafka
  PkgConfig::PQXX=libpqxx SQLite::SQLite3=sqlite3 PkgConfig::HTTPLIB=cpp-httplib)
function(_sluice_pc_visit item)
  get_property(seen GLOBAL PROPERTY _SLUICE_PC_SEEN)
  if(item IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _SLUICE_PC_SEEN "${item}")
  if(item MATCHES "^::@")
    return()  # CMake's marker around items another folder's target_link_libraries added (src/state/rocksdb)
  elseif(item MATCHES "^\\$<BUILD_INTERFACE:" OR item STREQUAL "sluice_warnings")
    return()  # generated protobuf objects (archived into the library linking them) and warning flags
  elseif(item STREQUAL "Threads::Threads")
    set_property(GLOBAL PROPERTY _SLUICE_PC_THREADS -pthread)
  elseif(item IN_LIST SLUICE_USER_TARGETS OR item IN_LIST SLUICE_INTERNAL_TARGETS)
    get_target_property(deps ${item} LINK_LIBRARIES)
    foreach(dep IN LISTS deps)
      _sluice_pc_visit("${dep}")
    endforeach()
    set_property(GLOBAL APPEND PROPERTY _SLUICE_PC_ARCHIVES ${item})  # after everything it uses
  else()
    foreach(pair IN LISTS _sluice_pc_modules)
      if(pair MATCHES "^(.+)=(.+)$" AND CMAKE_MATCH_1 STREQUAL item)
        set_property(GLOBAL APPEND PROPERTY _SLUICE_PC_REQUIRES ${CMAKE_MATCH_2})
        return()
      endif()
    endforeach()
    message(FATAL_ERROR "sluice.pc: no pkg-config module known for '${item}' (cmake/SluiceInstall.cmake)")
  endif()
endfunction()
foreach(target IN LISTS SLUICE_USER_TARGETS)
  _sluice_pc_visit(${target})
endforeach()
get_property(_sluice_pc_archives GLOBAL PROPERTY _SLUICE_PC_ARCHIVES)
get_property(_sluice_pc_requires GLOBAL PROPERTY _SLUICE_PC_REQUIRES)
get_property(_sluice_pc_threads GLOBAL PROPERTY _SLUICE_PC_THREADS)
list(REVERSE _sluice_pc_archives)
set(SLUICE_PC_LIBS "")
foreach(target IN LISTS _sluice_pc_archives)
  string(APPEND SLUICE_PC_LIBS " -l$<TARGET_FILE_BASE_NAME:${target}>")
endforeach()
list(JOIN _sluice_pc_requires " " SLUICE_PC_REQUIRES)
file(RELATIVE_PATH SLUICE_PC_PREFIX_FROM_PCFILEDIR /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" SLUICE_PC_PREFIX_FROM_PCFILEDIR "${SLUICE_PC_PREFIX_FROM_PCFILEDIR}")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/sluice.pc CONTENT "\
prefix=\${pcfiledir}/${SLUICE_PC_PREFIX_FROM_PCFILEDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}

Name: Sluice
Description: Stateful stream processing in C++20 (the engine and its connectors; compile with -std=c++20)
Version: ${PROJECT_VERSION}
Requires: ${SLUICE_PC_REQUIRES}
Cflags: -I\${includedir}
Libs: -L\${libdir}${SLUICE_PC_LIBS} ${_sluice_pc_threads}
")
install(FILES ${PROJECT_BINARY_DIR}/sluice.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
