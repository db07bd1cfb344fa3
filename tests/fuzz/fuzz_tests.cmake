# The fuzz targets and their ctest entries, shared by the fuzz build (tests/fuzz) and the main
# build's tests (which run the targets of its ExternalProject): one place names them.
set(TG_FUZZ_TARGETS safetensors idx idx_gzip manifest gguf api_request cifar layer_graph wordpiece
                     bert_config torch_checkpoint)
set(TG_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz target runs under ctest (FUZZ_SECONDS overrides at run time)")
set(TG_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

# The dictionary of a target, if its format has keywords.
function(tg_fuzz_dict target out)
  set(dict "")
  if(target STREQUAL "safetensors")
    set(dict ${TG_FUZZ_DIR}/safetensors.dict)
  elseif(target STREQUAL "manifest")
    set(dict ${TG_FUZZ_DIR}/manifest.dict)
  elseif(target STREQUAL "api_request")
    set(dict ${TG_FUZZ_DIR}/api_request.dict)
  elseif(target STREQUAL "gguf")
    set(dict ${TG_FUZZ_DIR}/gguf.dict)
  elseif(target STREQUAL "layer_graph")
    set(dict ${TG_FUZZ_DIR}/layer_graph.dict)
  elseif(target STREQUAL "bert_config")
    set(dict ${TG_FUZZ_DIR}/bert_config.dict)
  elseif(target STREQUAL "torch_checkpoint")
    set(dict ${TG_FUZZ_DIR}/torch_checkpoint.dict)
  elseif(target STREQUAL "idx")
    set(dict ${TG_FUZZ_DIR}/idx.dict)
  endif()
  set(${out} ${dict} PARENT_SCOPE)
endfunction()

# fuzz.<target>: runs the fuzzer binary `exe` on the seeds of `seeds/<target>` with a working
# corpus under `runs/<target>`; fails on any finding (the crashing input is kept there).
function(tg_add_fuzz_test target exe seeds runs)
  tg_fuzz_dict(${target} dict)
  add_test(NAME fuzz.${target}
    COMMAND ${CMAKE_COMMAND} -DFUZZER=${exe} -DSEEDS=${seeds}/${target} -DWORK=${runs}/${target}
            -DDICT=${dict} -DSECONDS=${TG_FUZZ_SECONDS} -P ${TG_FUZZ_DIR}/run_fuzz.cmake)
  math(EXPR timeout "${TG_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz.${target} PROPERTIES LABELS "fuzz" TIMEOUT ${timeout})
endfunction()
