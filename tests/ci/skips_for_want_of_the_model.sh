#!/bin/sh
# Stands in for a Qt Test run that skipped a real-model test (see
# tests/CMakeLists.txt: run_qt_test.cmake must fail it under CI=true).
echo "SKIP   : TestX::realModel() POWERINFER_MODEL is not set (scripts/test sets it)"
echo "Totals: 1 passed, 0 failed, 1 skipped"
exit 0
