# The suites run again on DEV=CL (label cl, plus the suite's own), and the loader's refusals.
# Included from tests/CMakeLists.txt when the cl plugin is built.

# No loader: a libOpenCL.so.1 that is not a library, found first; no platform: a vendors folder
# without drivers. Each gives its own reason, naming the Debian package to install.
set(cl_fake_loader_dir ${CMAKE_CURRENT_BINARY_DIR}/cl_no_loader)
file(WRITE ${cl_fake_loader_dir}/libOpenCL.so.1 "not a library\n")
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cl_no_vendors)
add_test(NAME cl.no_loader COMMAND tinyrun)
set_tests_properties(cl.no_loader PROPERTIES LABELS "cl;cli" ENVIRONMENT
  "DEV=CL;LD_LIBRARY_PATH=${cl_fake_loader_dir}"
  PASS_REGULAR_EXPRESSION "DEV=CL cannot be served:.*libOpenCL.so.1 \\(the OpenCL ICD loader\\) not found.*apt-get install ocl-icd-libopencl1")
add_test(NAME cl.no_platform COMMAND tinyrun)
set_tests_properties(cl.no_platform PROPERTIES LABELS "cl;cli" ENVIRONMENT
  "DEV=CL;OCL_ICD_VENDORS=${CMAKE_CURRENT_BINARY_DIR}/cl_no_vendors"
  PASS_REGULAR_EXPRESSION "DEV=CL cannot be served:.*no OpenCL platform.*apt-get install pocl-opencl-icd")
add_test(NAME cl.demo_source COMMAND tinyrun demo)
set_tests_properties(cl.demo_source PROPERTIES LABELS "cl;cli" ENVIRONMENT "DEV=CL;DEBUG=4"
  PASS_REGULAR_EXPRESSION "__kernel void E_[0-9_]+\\(__global float\\* data0.*get_local_id\\(0\\).*on CL:OpenCL.*0 of 4096 differ from the host")

# tg_add_cl_suite(EXE exe SUITE suite LABELS labels... [CASES doctest test-case filter]): suite
# `suite` of `exe` again with DEV=CL, as cl.<suite>.
function(tg_add_cl_suite)
  cmake_parse_arguments(A "" "EXE;SUITE;CASES" "LABELS" ${ARGN})
  set(filter "")
  if(A_CASES)
    set(filter "--test-case=${A_CASES}")
  endif()
  add_test(NAME cl.${A_SUITE} COMMAND ${A_EXE} --test-suite=${A_SUITE} ${filter} --no-version=true)
  set_tests_properties(cl.${A_SUITE} PROPERTIES LABELS "cl;${A_LABELS}" ENVIRONMENT "DEV=CL")
endfunction()

foreach(suite lower names linearize errors runner decomp opt pipeline gpu)
  tg_add_cl_suite(EXE tg_tests_codegen SUITE codegen.${suite} LABELS codegen)
endforeach()
foreach(suite elementwise reduce movement indexing matmul nnfunc autograd)
  tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.${suite} LABELS tensor)
endforeach()
tg_add_cl_suite(EXE tg_tests_engine SUITE engine.jit LABELS jit)
