# The suites run again on DEV=CL (label cl, plus the suite's own), and the loader's refusals.
# Included from tests/CMakeLists.txt when the cl plugin is built.

# tg_skip_without_opencl(test...): the tests report "skipped" with the reason (the loader's or the
# driver's, as the plugin words it) on a machine without an OpenCL device.
set(tg_no_opencl_regex "libOpenCL.so.1 \\(the OpenCL ICD loader\\) not found;no OpenCL platform:;no OpenCL device:")
function(tg_skip_without_opencl)
  set_tests_properties(${ARGN} PROPERTIES SKIP_REGULAR_EXPRESSION "${tg_no_opencl_regex}")
endfunction()
foreach(suite device renderer errors runtime)
  tg_skip_without_opencl(cl.${suite})
endforeach()

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
tg_skip_without_opencl(cl.demo_source)
set_tests_properties(cl.demo_source PROPERTIES LABELS "cl;cli" ENVIRONMENT "DEV=CL;DEBUG=4"
  PASS_REGULAR_EXPRESSION "__kernel void E_[0-9_]+\\(__global float\\* data0.*get_local_id\\(0\\).*on CL:OpenCL.*0 of 4096 differ from the host")

# tg_add_cl_suite(EXE exe SUITE suite LABELS labels... [CASES case...]): suite `suite` of `exe`
# again with DEV=CL, as cl.<suite>; with CASES only those test cases (doctest name patterns, `*`
# a wildcard) unless TG_CL_FULL_SUITES is on.
option(TG_CL_FULL_SUITES "Run the whole tensor suites on DEV=CL (about 35 CPU-minutes cold)" OFF)
function(tg_add_cl_suite)
  cmake_parse_arguments(A "" "EXE;SUITE" "LABELS;CASES" ${ARGN})
  set(args --test-suite=${A_SUITE} --no-version=true)
  if(A_CASES AND NOT TG_CL_FULL_SUITES)
    list(JOIN A_CASES "," cases)
    list(APPEND args "--test-case=${cases}")
  endif()
  add_test(NAME cl.${A_SUITE} COMMAND ${A_EXE} ${args})
  set_tests_properties(cl.${A_SUITE} PROPERTIES LABELS "cl;${A_LABELS}" ENVIRONMENT "DEV=CL")
  tg_skip_without_opencl(cl.${A_SUITE})
endfunction()

# The codegen suites whole. POCL compiles each new kernel in about 0.6 s on these cores (cold
# caches, as on CI), so of the tensor suites (about 1,900 kernels) a subset covers each area:
# dtypes and their emulation, views, long and grouped reduces, movement, indexing, matmul,
# convolution, pooling, normalization and autograd (about 260 kernels).
foreach(suite lower names linearize errors runner decomp opt pipeline gpu)
  tg_add_cl_suite(EXE tg_tests_codegen SUITE codegen.${suite} LABELS codegen)
endforeach()
tg_add_cl_suite(EXE tg_tests_codegen SUITE codegen.beam LABELS codegen beam)
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.elementwise LABELS tensor CASES
  "special float values*" "integer division and modulo*" "where with a viewed condition*"
  "cast between dtypes" "comparisons in bfloat16")
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.reduce LABELS tensor CASES
  "long reductions" "chains: softmax*" "accumulator dtypes*" "argmax and argmin with NaN*"
  "reduce of an expanded and a padded input" "zero-size and 0-d reductions")
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.movement LABELS tensor CASES
  "reshape\\, permute*" "slices with steps*" "index" "contiguous of views*"
  "views of realized results*")
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.indexing LABELS tensor CASES
  "zero-size and 0-d inputs" "split\\, chunk*" "masked_fill\\, masked_select*")
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.matmul LABELS tensor)
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.scatter LABELS tensor)
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.nnfunc LABELS tensor CASES
  "conv2d: non-contiguous input*" "conv1d and conv3d*" "linear with PyTorch's weight layout"
  "log_softmax and logsumexp*" "batch_norm: training*" "dropout: zeroes*")
tg_add_cl_suite(EXE tg_tests_tensor SUITE tensor.autograd LABELS tensor CASES
  "d/dx sum(x*x) is 2x exactly" "gradcheck: where\\, clamp\\, cast" "gradcheck: cat and stack"
  "max and min split the gradient*" "backward accumulates into grad*"
  "a realized parameter gets its grad*")
tg_add_cl_suite(EXE tg_tests_engine SUITE engine.jit LABELS jit)

# DEBUG=2: each launch with its global:local sizes.
add_test(NAME cl.debug2 COMMAND tinyrun demo)
set_tests_properties(cl.debug2 PROPERTIES LABELS "cl;cli" ENVIRONMENT "DEV=CL;DEBUG=2"
  PASS_REGULAR_EXPRESSION "\\*\\*\\* CL +[0-9]+ E_[0-9_]+ +dims [0-9,]+:[0-9,]+ +arg")
tg_skip_without_opencl(cl.debug2)

# tinyrun mnist train on DEV=CL: 5 steps, the loss falls from about 2.6 to below 1.5 (0.68 on
# POCL). About 2.5 CPU-minutes cold, so only with the whole suites.
if(TG_CL_FULL_SUITES)
  add_test(NAME cl.mnist_train COMMAND tinyrun mnist train --steps 5)
  set_tests_properties(cl.mnist_train PROPERTIES LABELS "cl;mnist" ENVIRONMENT "DEV=CL"
    PASS_REGULAR_EXPRESSION "step 5/5 +loss (0\\.[0-9]+|1\\.[0-4][0-9]*) ")
  tg_skip_without_opencl(cl.mnist_train)
endif()
