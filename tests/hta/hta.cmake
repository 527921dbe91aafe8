# Holistic Trace Analysis (PyPI) reads our chrome export of a GPU trace.
# HTA lives in a virtual environment made by tests/hta/setup-venv; without it
# the test is skipped (77), and says so. Included by tests/chrome, whose
# export it tests and whose fixture it writes.
set(GPDL_HTA_VENV "${CMAKE_BINARY_DIR}/hta-venv" CACHE PATH
    "virtual environment with HolisticTraceAnalysis (tests/hta/setup-venv)")
add_executable(gen-hta-trace ${CMAKE_CURRENT_LIST_DIR}/gen_hta_trace.c)
target_link_libraries(gen-hta-trace PRIVATE gpdl_trace_fixture)
set_target_properties(gen-hta-trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_test(NAME test_hta
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run-hta-test $<TARGET_FILE:gen-hta-trace>
                 $<TARGET_FILE:gprof-dl> ${GPDL_HTA_VENV})
set_tests_properties(test_hta PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# A 2-rank job of synthetic Kineto traces (gen_dist_kineto.py): the
# Distributed view's per-rank figures against ones worked out by hand
# (hta_dist_figures, no HTA needed; skipped, 77, while the view has no
# per-rank rows), and HTA's comm-comp overlap on the same files against ours
# (test_hta_dist, skipped without the venv).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME hta_dist_figures
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/check_dist.py
                 $<TARGET_FILE:gprof-dl>)
add_test(NAME test_hta_dist
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/run-hta-dist-test $<TARGET_FILE:gprof-dl>
                 ${GPDL_HTA_VENV})
set_tests_properties(hta_dist_figures test_hta_dist PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
