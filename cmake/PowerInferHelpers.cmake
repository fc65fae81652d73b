# Shared CMake helpers.

# pi_module(NAME SOURCES... [DEPS ...]) — one static library per engine folder,
# so that each folder's dependencies are explicit and layering is checkable.
function(pi_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/engine ${PROJECT_SOURCE_DIR}/engine/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  pi_warnings(${name})
endfunction()

function(pi_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive- /utf-8)
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
endfunction()

# A cross build runs its tests through the emulator (the mingw-w64 build:
# Wine; cmake/toolchains/mingw-w64-x86_64.cmake).
set(PI_TEST_EMULATOR_ARG "")
if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
  list(GET CMAKE_CROSSCOMPILING_EMULATOR 0 _pi_emulator)
  set(PI_TEST_EMULATOR_ARG "-DTEST_EMULATOR=${_pi_emulator}")
endif()

# pi_qt_test(NAME SOURCES... [DEPS ...] [ENV ...]) — a Qt Test executable
# registered with CTest, headless. Only for WITH_QT builds.
function(pi_qt_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;ENV" ${ARGN})
  if(NOT WITH_QT)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Test ${ARG_DEPS})
  target_compile_definitions(${name} PRIVATE
    POWERINFER_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    POWERINFER_BINARY_DIR="${PROJECT_BINARY_DIR}")
  pi_warnings(${name})
  # Through run_qt_test.cmake: under CI=true a skip for a missing model or
  # corpus fails (CTest alone counts a QSKIP as a pass).
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
    -DTEST_EXE=$<TARGET_FILE:${name}> -DTEST_LOG=${CMAKE_CURRENT_BINARY_DIR}/${name}.log
    ${PI_TEST_EMULATOR_ARG} -P ${PROJECT_SOURCE_DIR}/cmake/run_qt_test.cmake)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  # Qt Test's own watchdog (QTEST_FUNCTION_TIMEOUT, 300 s by default) follows
  # the CTest limit: Qt 6.4's can miss the step from one test function to
  # the next and then counts several functions as one, so it stopped
  # tst_cli (303 s in all, 27 s into its last function) under ctest -j 2.
  math(EXPR _pi_timeout_ms "${ARG_TIMEOUT} * 1000")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;QTEST_FUNCTION_TIMEOUT=${_pi_timeout_ms};${ARG_ENV}"
    SKIP_REGULAR_EXPRESSION "PI_TEST_SKIPPED: ")
endfunction()

# pi_plain_test(NAME SOURCES... [DEPS ...]) — a plain C++ test (no Qt) that
# prints "N passed, N failed"; used where Qt is absent (the GPU machine).
function(pi_plain_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_compile_definitions(${name} PRIVATE POWERINFER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  pi_warnings(${name})
  # Through run_qt_test.cmake as well: under CI=true "X not built: checks
  # skipped" fails (GPU checks without a GPU stay skips).
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
    -DTEST_EXE=$<TARGET_FILE:${name}> -DTEST_LOG=${CMAKE_CURRENT_BINARY_DIR}/${name}.log
    ${PI_TEST_EMULATOR_ARG} -P ${PROJECT_SOURCE_DIR}/cmake/run_qt_test.cmake)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "PI_TEST_SKIPPED: ")
endfunction()
