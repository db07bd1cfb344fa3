# cifar.train_accuracy and cifar.train_accuracy_long: `tinyrun cifar train` (hlb_cifar10) on the
# 4,000 real training images of ../shared/data/cifar with the recipe's seed 201 for STEPS steps
# of batch 256, the last HOLDOUT images held out as the test set; the test accuracy printed at
# the end must be at least MIN_ACCURACY percent (chance is 10%), and no progress line may show a
# loss that is not a number. Skipped (ctest SKIP_REGULAR_EXPRESSION) without the data.
# Measured here (2 cores of an AMD EPYC with AVX-512, shared), with the EMA and cutmix: the
# model's test accuracy after 10 / 20 / 30 / 40 steps 20.4 / 21.4 / 35.0 / 37.6% (EMA 35.8% at
# the end), 21.0 / 26.0 / 35.8 / 36.6% (EMA 35.4%) with the narrow convolutions channels-last:
# the default set's run is 40 steps, threshold 28% (chance is 10% +- 1.3% on 500 images; fewer
# steps amplify rounding: 10 steps without the EMA gave 16.8% and 9.4% for two summation orders
# of the same convolutions), about a minute. 150 steps (the long run, threshold 65%): 41.0 /
# 55.8 / 67.4 / 73.0 / 77.0% after 25 / 50 / 75 / 100 / 125 steps, 78.0% at the end (EMA 77.6%),
# 3.5 minutes.
# cmake -DTINYRUN=... -DSOURCE_DIR=... -DSTEPS=N -DHOLDOUT=N -DMIN_ACCURACY=NN -DEMA=0|1
#       [-DCUTMIX=0|1]
#       -P train_accuracy.cmake
if(NOT DEFINED CUTMIX)
  set(CUTMIX 1)
endif()
if(DEFINED ENV{TG_DATA_DIR} AND NOT "$ENV{TG_DATA_DIR}" STREQUAL "")
  set(data "$ENV{TG_DATA_DIR}/cifar")
else()
  set(data "${SOURCE_DIR}/../shared/data/cifar")
endif()
foreach(f data_batch_1_0000-0999.bin data_batch_1_1000-1999.bin data_batch_1_2000-2999.bin
          data_batch_1_3000-3999.bin)
  if(NOT EXISTS "${data}/${f}")
    message("SKIP: ${data}/${f} is missing (put the CIFAR-10 batches in ../shared/data/cifar or "
            "$TG_DATA_DIR/cifar: see the README, tinyrun cifar)")
    return()
  endif()
endforeach()

# Only the four shared batches: a folder of links, so that a user's full official set in the
# same folder does not change what this test trains on.
set(work "${CMAKE_CURRENT_BINARY_DIR}/cifar_train_accuracy_${STEPS}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
foreach(f data_batch_1_0000-0999.bin data_batch_1_1000-1999.bin data_batch_1_2000-2999.bin
          data_batch_1_3000-3999.bin)
  file(CREATE_LINK "${data}/${f}" "${work}/${f}" SYMBOLIC)
endforeach()

execute_process(COMMAND "${TINYRUN}" cifar train --steps ${STEPS} --batch 256 --seed 201
                        --holdout ${HOLDOUT} --ema ${EMA} --cutmix ${CUTMIX} --data "${work}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
file(REMOVE_RECURSE "${work}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tinyrun cifar train failed (${rc})")
endif()
if(out MATCHES "loss -?nan" OR out MATCHES "loss -?inf")
  message(FATAL_ERROR "a training step's loss is not a number")
endif()
if(NOT out MATCHES "\ntest accuracy: ([0-9]+)\\.([0-9][0-9])%\n")
  message(FATAL_ERROR "no 'test accuracy: NN.NN%' line in the output")
endif()
set(acc "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
if(CMAKE_MATCH_1 LESS ${MIN_ACCURACY})
  message(FATAL_ERROR "test accuracy ${acc}% after ${STEPS} steps is below ${MIN_ACCURACY}%")
endif()
message("PASS: test accuracy ${acc}% after ${STEPS} steps (at least ${MIN_ACCURACY}%)")
