# The cuda plugin without a GPU (label cuda): the renderer and compiler (NVRTC to PTX, ptxas to
# SASS) over the codegen suites' kernels and tensor programs' kernels, and the probe's refusals
# with fake drivers; on a GPU (skipped without one), the copy routes. Included from
# tests/CMakeLists.txt when the plugin is built. Where the toolkit is absent the compile tests
# report "skipped" with the reason.

tg_add_test_exe(tg_tests_cuda ${CMAKE_CURRENT_SOURCE_DIR}/cuda/test_*.cpp
                ${CMAKE_CURRENT_SOURCE_DIR}/codegen/*.cpp)
target_link_libraries(tg_tests_cuda PRIVATE tg_cuda_impl tg_cpu_impl)
add_dependencies(tg_tests_cuda tg-cpu tg-cuda)

set(tg_no_cuda_toolkit_regex "cuda test skipped: ")
foreach(suite renderer tensor_corpus copy)
  tg_add_suite(EXE tg_tests_cuda SUITE cuda.${suite} LABELS cuda)
  set_tests_properties(cuda.${suite} PROPERTIES SKIP_REGULAR_EXPRESSION "${tg_no_cuda_toolkit_regex}")
endforeach()
# The codegen suites run first in the same process (on the CPU), recording their kernels.
add_test(NAME cuda.codegen_corpus COMMAND tg_tests_cuda --no-version=true
         "--test-suite=codegen.*,cuda.codegen_corpus")
set_tests_properties(cuda.codegen_corpus PROPERTIES LABELS "cuda;codegen"
                     SKIP_REGULAR_EXPRESSION "${tg_no_cuda_toolkit_regex}")

# Fake drivers, each a libcuda.so.1 in its own folder.
foreach(mode INIT_FAILS OLD_DRIVER NO_DEVICE MISSING)
  string(TOLOWER ${mode} dir)
  add_library(fake_cuda_${dir} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/cuda/fake_libcuda.cpp)
  target_compile_definitions(fake_cuda_${dir} PRIVATE TG_FAKE_CUDA_${mode})
  set_target_properties(fake_cuda_${dir} PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
    NO_SONAME ON LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda_${dir})
  tg_set_warnings(fake_cuda_${dir})
  add_dependencies(tg_tests_cuda fake_cuda_${dir})
endforeach()
# cuda_no_driver_dir (tests/CMakeLists.txt, for cli.dev_unavailable) holds the non-library.

# tg_add_cuda_refusal(name dir regex): tinyrun with DEV=CUDA and the fake driver of `dir` first
# on the loader's path fails with the probe's reason.
function(tg_add_cuda_refusal name dir regex)
  add_test(NAME cuda.${name} COMMAND tinyrun)
  set_tests_properties(cuda.${name} PROPERTIES LABELS "cuda;cli" ENVIRONMENT
    "DEV=CUDA;LD_LIBRARY_PATH=${dir}" PASS_REGULAR_EXPRESSION "DEV=CUDA cannot be served:.*${regex}")
endfunction()
tg_add_cuda_refusal(no_driver ${cuda_no_driver_dir}
  "libcuda.so.1 \\(the NVIDIA driver\\) not found")
tg_add_cuda_refusal(init_fails ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda_init_fails
  "cuInit failed: CUDA_ERROR_NO_DEVICE \\(100\\): no CUDA-capable device is detected")
tg_add_cuda_refusal(old_driver ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda_old_driver
  "the NVIDIA driver is too old: it supports CUDA 11.4, the plugin needs CUDA 12.0")
tg_add_cuda_refusal(no_device ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda_no_device
  "no CUDA device: the driver \\(CUDA 12.8\\) lists none")
tg_add_cuda_refusal(missing_symbol ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda_missing
  "libcuda.so.1 lacks cuGraphExecKernelNodeSetParams")
