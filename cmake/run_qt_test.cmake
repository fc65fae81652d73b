# Runs one test executable for CTest (pi_qt_test, pi_plain_test), passing its
# output and exit status through. CTest counts a QSKIP (or a plain test that
# prints "skipped" and returns 0) as a pass; under CI (CI=true or CI=1 when
# ctest runs) a test that skipped because the real model, a corpus/fixture,
# a tool (the sqlite3 CLI) or one of our own executables was missing fails
# instead, so that a CI run without them cannot look green. A GPU check that
# skips without a GPU stays a skip.
#   cmake -DTEST_EXE=... -DTEST_LOG=... [-DTEST_EMULATOR=wine] -P run_qt_test.cmake
execute_process(COMMAND ${TEST_EMULATOR} "${TEST_EXE}" RESULT_VARIABLE rc
                OUTPUT_FILE "${TEST_LOG}" ERROR_FILE "${TEST_LOG}")
# Under Wine a program now and then does not start at all (exit status 1,
# not a byte of output, in 0.04 s; tst_layer_plan once, beside another
# test starting): every test prints something, so an empty log is Wine's,
# and the test runs once more.
if(TEST_EMULATOR AND NOT rc STREQUAL "0")
  file(SIZE "${TEST_LOG}" log_bytes)
  if(log_bytes EQUAL 0)
    message("${TEST_EXE}: the emulator started nothing (exit status ${rc}); running it again")
    execute_process(COMMAND ${TEST_EMULATOR} "${TEST_EXE}" RESULT_VARIABLE rc
                    OUTPUT_FILE "${TEST_LOG}" ERROR_FILE "${TEST_LOG}")
  endif()
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E cat "${TEST_LOG}")
# 77: the test skipped itself (a GPU test without a GPU); a -P script cannot
# exit 77 (CMake 3.25), so it says so for the SKIP_REGULAR_EXPRESSION that
# pi_plain_test and pi_qt_test set.
if(rc STREQUAL "77")
  message("PI_TEST_SKIPPED: ${TEST_EXE} exit status 77")
  return()
endif()
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${TEST_EXE}: exit status ${rc}")
endif()
if("$ENV{CI}" STREQUAL "true" OR "$ENV{CI}" STREQUAL "1")
  file(STRINGS "${TEST_LOG}" missing
       REGEX "^SKIP.*(POWERINFER_MODEL is not set|corpus not available|is missing: run tests/reference|sqlite3 CLI not available|is not built|privileges that ignore file permissions)|^powerinfer-[a-z]+ not built: .*skipped")
  if(missing)
    string(REPLACE ";" "\n" missing "${missing}")
    message(FATAL_ERROR "CI=true: these tests need the real model, a corpus, a tool or one of "
                        "the project's executables and did not run (scripts/fetch-model, "
                        "POWERINFER_MODEL, scripts/deps, a full build):\n${missing}")
  endif()
endif()
