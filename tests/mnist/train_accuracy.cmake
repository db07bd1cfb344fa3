# mnist.train_accuracy: `tinyrun mnist train --steps 70 --seed 0` on the 8,000 real training
# digits must reach >= 97% on the 2,000 test digits, and `tinyrun mnist eval` of the saved
# state must print the same accuracy. Skipped (ctest SKIP_REGULAR_EXPRESSION) without the data.
# cmake -DTINYRUN=... -DSOURCE_DIR=... -DWORK_DIR=... -P train_accuracy.cmake
if(DEFINED ENV{TG_DATA_DIR} AND NOT "$ENV{TG_DATA_DIR}" STREQUAL "")
  set(data "$ENV{TG_DATA_DIR}/mnist")
else()
  set(data "${SOURCE_DIR}/../shared/data/mnist")
endif()
foreach(f train8k-images-idx3-ubyte.gz train8k-labels-idx1-ubyte.gz test2k-images-idx3-ubyte.gz
          test2k-labels-idx1-ubyte.gz)
  if(NOT EXISTS "${data}/${f}")
    message("SKIP: ${data}/${f} is missing (put the MNIST files in ../shared/data/mnist or "
            "$TG_DATA_DIR/mnist)")
    return()
  endif()
endforeach()

file(MAKE_DIRECTORY "${WORK_DIR}")
set(weights "${WORK_DIR}/mnist_train_accuracy.safetensors")
file(REMOVE "${weights}")
execute_process(COMMAND "${TINYRUN}" mnist train --steps 70 --seed 0 --data "${data}"
                        --save "${weights}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tinyrun mnist train failed (${rc})")
endif()
if(NOT out MATCHES "\ntest accuracy: ([0-9]+\\.[0-9][0-9])%\n")
  message(FATAL_ERROR "no 'test accuracy: NN.NN%' line in the output")
endif()
set(acc "${CMAKE_MATCH_1}")
if(acc LESS 97)
  message(FATAL_ERROR "test accuracy ${acc}% after 70 steps is below 97%")
endif()

execute_process(COMMAND "${TINYRUN}" mnist eval --weights "${weights}" --data "${data}"
                        --images test2k-images-idx3-ubyte.gz --labels test2k-labels-idx1-ubyte.gz
                OUTPUT_VARIABLE eout ERROR_VARIABLE eerr RESULT_VARIABLE erc)
message("${eout}${eerr}")
if(NOT erc EQUAL 0)
  message(FATAL_ERROR "tinyrun mnist eval failed (${erc})")
endif()
if(NOT eout MATCHES "test accuracy: ${acc}%\n")
  message(FATAL_ERROR "mnist eval of the saved state does not print the trained accuracy ${acc}%")
endif()
file(REMOVE "${weights}")
message("PASS: test accuracy ${acc}% >= 97%, and eval of the saved state agrees")
