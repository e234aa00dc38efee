# Build conventions: one folder is one library. Inside a folder
#   *.cc                 -> the library rw_<folder>
#   *_test.cc            -> one GoogleTest binary <folder>_test, ctest label "unit"
#   *_fuzz.cc            -> one executable each; with RW_FUZZ a libFuzzer target,
#                           otherwise a replayer of its corpus (ctest label "fuzz")
#   *_bench.cc           -> one Google Benchmark binary <folder>_bench (make bench)
# so that adding a file never needs an edit to a shared CMakeLists.txt.
# A folder whose code starts threads passes THREADS: its <folder>_test also
# gets the ctest label "tsan" and joins the target tsan_tests, which `make
# tsan` builds and runs under ThreadSanitizer (the tsan preset).

set(RW_SOURCE_ROOT ${PROJECT_SOURCE_DIR})
set(RW_FUZZ_SECONDS 30 CACHE STRING "Upper bound in seconds of each libFuzzer run in ctest")
set(RW_FUZZ_RUNS 30000 CACHE STRING "Inputs each libFuzzer run in ctest tries")
set(RW_FUZZ_SEED 1 CACHE STRING "libFuzzer seed in ctest: fixed, so that make test is repeatable")

# The tests of threaded code, built alone in the tsan preset (rw_tsan_test).
add_custom_target(tsan_tests)

# Labels the test `test` (built by `target`) "tsan" besides its own labels;
# under ThreadSanitizer it runs with the suppressions of the libraries'
# known races (tests/support/tsan.supp, docs/consensus.md "Known library
# problems seen in tests", 4).
function(rw_tsan_test test target)
  set_property(TEST ${test} APPEND PROPERTY LABELS tsan)
  if(RW_SANITIZE STREQUAL "thread")
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
      "TSAN_OPTIONS=suppressions=${RW_SOURCE_ROOT}/tests/support/tsan.supp")
  endif()
  add_dependencies(tsan_tests ${target})
endfunction()

# rw_folder(NAME DEPS <libs...> [TEST_DEPS <libs...>] [HEADER_ONLY] [THREADS])
function(rw_folder name)
  cmake_parse_arguments(ARG "HEADER_ONLY;THREADS" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB all_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  set(lib_sources "")
  set(test_sources "")
  set(fuzz_sources "")
  set(bench_sources "")
  foreach(f ${all_sources})
    if(f MATCHES "_test\\.cc$")
      list(APPEND test_sources ${f})
    elseif(f MATCHES "_fuzz\\.cc$")
      list(APPEND fuzz_sources ${f})
    elseif(f MATCHES "_main\\.cc$")
      # Entry points (such as the fuzz replayer) are linked where they are used.
    elseif(f MATCHES "_bench\\.cc$")
      list(APPEND bench_sources ${f})
    else()
      list(APPEND lib_sources ${f})
    endif()
  endforeach()

  set(lib rw_${name})
  if(lib_sources)
    add_library(${lib} STATIC ${lib_sources})
    target_include_directories(${lib} PUBLIC ${RW_SOURCE_ROOT}/src)
    target_link_libraries(${lib} PUBLIC ${ARG_DEPS})
  else()
    add_library(${lib} INTERFACE)
    target_include_directories(${lib} INTERFACE ${RW_SOURCE_ROOT}/src)
    target_link_libraries(${lib} INTERFACE ${ARG_DEPS})
  endif()

  if(test_sources)
    add_executable(${name}_test ${test_sources})
    target_link_libraries(${name}_test PRIVATE ${lib} ${ARG_TEST_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
    target_compile_definitions(${name}_test PRIVATE RW_SOURCE_ROOT="${RW_SOURCE_ROOT}")
    add_test(NAME ${name}_test COMMAND ${name}_test)
    set_tests_properties(${name}_test PROPERTIES LABELS unit
      ENVIRONMENT "RW_SOURCE_ROOT=${RW_SOURCE_ROOT}")
    if(ARG_THREADS)
      rw_tsan_test(${name}_test ${name}_test)
    endif()
  endif()

  foreach(f ${fuzz_sources})
    get_filename_component(target ${f} NAME_WE)
    add_executable(${target} ${f})
    target_link_libraries(${target} PRIVATE ${lib} ${ARG_TEST_DEPS})
    set(corpus ${RW_SOURCE_ROOT}/tests/corpus/${target})
    if(RW_FUZZ)
      target_link_options(${target} PRIVATE -fsanitize=fuzzer)
      # A short libFuzzer run that starts from the checked-in corpus with a
      # fixed seed and an empty scratch folder, so that every `make test`
      # runs the same inputs: a finding is a reproducible failure, never a
      # flaky one. Long, randomised fuzzing uses the `fuzz` preset.
      set(scratch ${CMAKE_CURRENT_BINARY_DIR}/${target}.new)
      add_test(NAME ${target}
        COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                sh -c "rm -rf ${scratch} && mkdir -p ${scratch} && exec $<TARGET_FILE:${target}> -seed=${RW_FUZZ_SEED} -runs=${RW_FUZZ_RUNS} -max_total_time=${RW_FUZZ_SECONDS} -rss_limit_mb=2048 -timeout=10 -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/ ${scratch} ${corpus}")
    else()
      target_sources(${target} PRIVATE ${RW_SOURCE_ROOT}/src/base/fuzz_replay_main.cc)
      add_test(NAME ${target} COMMAND ${target} ${corpus})
    endif()
    set_tests_properties(${target} PROPERTIES LABELS fuzz)
  endforeach()

  if(bench_sources AND RW_BENCH)
    add_executable(${name}_bench ${bench_sources})
    target_link_libraries(${name}_bench PRIVATE ${lib} ${ARG_TEST_DEPS} benchmark::benchmark benchmark::benchmark_main)
    set_property(GLOBAL APPEND PROPERTY RW_BENCH_TARGETS ${name}_bench)
  endif()
endfunction()
