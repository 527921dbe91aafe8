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
