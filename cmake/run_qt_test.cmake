# Runs one Qt Test executable for CTest (pi_qt_test), passing its output and
# exit status through. CTest counts a QSKIP as a pass; under CI (CI=true or
# CI=1 when ctest runs) a test that skipped because the real model or a
# corpus/fixture could not be found fails instead, so that a CI run without
# them cannot look green.
#   cmake -DTEST_EXE=... -DTEST_LOG=... -P run_qt_test.cmake
execute_process(COMMAND "${TEST_EXE}" RESULT_VARIABLE rc
                OUTPUT_FILE "${TEST_LOG}" ERROR_FILE "${TEST_LOG}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E cat "${TEST_LOG}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${TEST_EXE}: exit status ${rc}")
endif()
if("$ENV{CI}" STREQUAL "true" OR "$ENV{CI}" STREQUAL "1")
  file(STRINGS "${TEST_LOG}" missing
       REGEX "^SKIP.*(POWERINFER_MODEL is not set|corpus not available|is missing: run tests/reference)")
  if(missing)
    string(REPLACE ";" "\n" missing "${missing}")
    message(FATAL_ERROR "CI=true: these tests need the real model or corpus and did not run "
                        "(scripts/fetch-model, POWERINFER_MODEL):\n${missing}")
  endif()
endif()
