#!/bin/sh
# Stands in for a plain test (tst_layer_offload, tst_sparse_attention) that
# prints "skipped" and returns 0 (run_qt_test.cmake fails it under CI=true).
echo "powerinfer-cli not built: CLI checks skipped"
echo "12 passed, 0 failed"
exit 0
