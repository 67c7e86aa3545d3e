# sluice_test(NAME name SOURCES a.cc b.cc LIBS x y LABELS unit [TIMEOUT s] [NO_UNITY])
# Every test carries ctest labels: `unit` and `integration` form the default (CI) tier; `soak` and
# `sanitizer`-only suites are run by developers before resolving an issue (see README "Testing").
function(sluice_test)
  cmake_parse_arguments(T "NO_UNITY" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  # A test program of several sources compiles them as one (a unity build): they instantiate the same templates
  # (state backends, serializers, operators for the same types), which one translation unit compiles once - about
  # half the compile time of such a program. So the names a test source keeps to itself (its anonymous namespace)
  # must differ from its neighbours'; NO_UNITY for sources that cannot share one translation unit.
  list(LENGTH T_SOURCES source_count)
  if(source_count GREATER 1 AND NOT T_NO_UNITY)
    set_target_properties(${T_NAME} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  endif()
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main sluice_warnings)
  sluice_test_code(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  sluice_test_scratch(${T_NAME})
endfunction()

# sluice_compile_error_test(NAME name SOURCE file.cc EXPECT "message" FIX_DEFINE MACRO)
# A user mistake that must fail to compile with Sluice's own message: `name` compiles SOURCE against the public
# headers and passes when the compiler prints EXPECT; `name_control` compiles it with -D<FIX_DEFINE> (the mistake
# fixed) and passes when that succeeds, so the expected failure cannot come from anything else. Label unit.
function(sluice_compile_error_test)
  cmake_parse_arguments(T "" "NAME;SOURCE;EXPECT;FIX_DEFINE" "" ${ARGN})
  set(compile ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include)
  add_test(NAME ${T_NAME} COMMAND ${compile} ${T_SOURCE})
  set_tests_properties(${T_NAME} PROPERTIES LABELS unit TIMEOUT 120 PASS_REGULAR_EXPRESSION "${T_EXPECT}")
  add_test(NAME ${T_NAME}_control COMMAND ${compile} -D${T_FIX_DEFINE} ${T_SOURCE})
  set_tests_properties(${T_NAME}_control PROPERTIES LABELS unit TIMEOUT 120)
endfunction()

# sluice_test_code(target): a test executable's own translation units compile at -O1 in the Release build. Most of
# their compile time is optimising the operators their lambdas instantiate (-O1 takes about two thirds of -O3's
# time), while what they test - the engine libraries they link - keeps -O3. Speed is measured in bench/, which
# keeps -O3 throughout. The sanitizer and dev presets keep their own levels. They also share one precompiled header
# (sluice_test_pch below).
function(sluice_test_code target)
  _sluice_test_flags(${target})
  if(TARGET sluice_test_pch)
    target_precompile_headers(${target} REUSE_FROM sluice_test_pch)
  endif()
endfunction()
function(_sluice_test_flags target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endfunction()

# sluice_test_pch: GoogleTest and the standard headers most tests include, precompiled once for every test program
# (about a second of parsing saved per test source). A header of ours does not belong here: every test would
# recompile when it changes. The precompiled header must be built with the tests' own flags, hence the same
# -O level and warnings; GCC (-Winvalid-pch, which CMake adds, and -Werror) refuses one built otherwise. Release
# builds only: that is the build CI times; the sanitizer and dev builds compile their tests as before.
function(sluice_test_pch_target)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Release")
    return()
  endif()
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/sluice_test_pch.cc CONTENT "// owns the tests' precompiled header\n")
  add_library(sluice_test_pch OBJECT ${CMAKE_BINARY_DIR}/sluice_test_pch.cc)
  target_link_libraries(sluice_test_pch PRIVATE GTest::gtest sluice_warnings)
  _sluice_test_flags(sluice_test_pch)
  target_precompile_headers(sluice_test_pch PRIVATE <gtest/gtest.h> <algorithm> <atomic> <chrono> <filesystem>
                            <fstream> <functional> <map> <memory> <mutex> <optional> <random> <set> <string>
                            <thread> <vector>)
endfunction()

# sluice_test_scratch(name): the test's scratch files go to <build>/test-tmp/<name>/ (TEST_TMPDIR for
# ::testing::TempDir(), TMPDIR for mktemp, RocksDB working directories and the benchmarks), not to /tmp: what a
# test leaves behind stays with its build and goes with it. Deferred to the end of the directory, so it also
# applies after a later set_tests_properties(... ENVIRONMENT ...). Call it for tests made with add_test.
function(sluice_test_scratch name)
  # EVAL: a deferred call expands its arguments when it runs, after this function's variables are gone.
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _sluice_test_scratch_now [[${name}]])")
endfunction()
function(_sluice_test_scratch_now name)
  set(dir ${CMAKE_BINARY_DIR}/test-tmp/${name})
  file(MAKE_DIRECTORY ${dir})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "TEST_TMPDIR=${dir}/" "TMPDIR=${dir}")
endfunction()

# sluice_benchmark(target): a benchmark harness (bench/, src/<module>/bench/). Built by the `benchmarks` target or by
# name (`cmake --build --preset release --target checkpoint_bench`), not by a plain build: the optimized build CI
# times compiles what the default test tier runs, and the harnesses were a tenth of it. Their smoke tests carry the
# `bench` label (`cmake --build --preset release --target benchmarks && ctest --preset bench`).
function(sluice_benchmark target)
  set_target_properties(${target} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  add_dependencies(benchmarks ${target})
endfunction()
