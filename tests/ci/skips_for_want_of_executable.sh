#!/bin/sh
# Stands in for a Qt Test run that skipped because powerinfer-desktop was not
# built (run_qt_test.cmake fails it under CI=true).
echo "SKIP   : TestDesktopApp::smokeModeOnTheRealModel() powerinfer-desktop is not built (the engine runtime pi_runtime is missing)"
echo "Totals: 9 passed, 0 failed, 1 skipped"
exit 0
