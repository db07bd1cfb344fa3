# cmake -DBUILD_DIR=... -DSOURCE_DIR=tests/out_of_tree -DWORK_DIR=... -DGENERATOR=...
#       -DBUILD_TYPE=... [-DSANITIZE=ON] -P out_of_tree.cmake
# Installs the built project to WORK_DIR/prefix, builds the out-of-tree plugin project against
# it with find_package(tg), and checks that the plugin loads through TG_PLUGIN_PATH, from a
# program of that project and from the installed tinyrun.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
# A sanitized libtg needs the sanitizer runtime in every program that loads it.
set(flags "")
if(SANITIZE)
  set(san "-fsanitize=address,undefined -fno-omit-frame-pointer")
  set(flags "-DCMAKE_CXX_FLAGS=${san}" "-DCMAKE_EXE_LINKER_FLAGS=${san}"
            "-DCMAKE_MODULE_LINKER_FLAGS=${san}")
endif()
set(prefix ${WORK_DIR}/prefix)
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${prefix} ${flags})
run("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(f libtg-hello.so libtg-hello.json)
  if(NOT EXISTS ${WORK_DIR}/build/plugins/${f})
    message(FATAL_ERROR "tg_add_plugin did not produce ${f}")
  endif()
endforeach()

set(ENV{TG_PLUGIN_PATH} ${WORK_DIR}/build/plugins)
run("check_hello" ${WORK_DIR}/build/check_hello)
message(STATUS "check_hello:\n${OUT}")
if(NOT OUT MATCHES "hello: available ${WORK_DIR}/build/plugins/libtg-hello.so")
  message(FATAL_ERROR "check_hello did not list the hello plugin as available:\n${OUT}")
endif()

# The installed tinyrun: hello through TG_PLUGIN_PATH, null from <prefix>/lib/tg/plugins.
run("tinyrun plugins" ${prefix}/bin/tinyrun plugins)
message(STATUS "tinyrun plugins:\n${OUT}")
if(NOT OUT MATCHES "hello: available\n  library   ${WORK_DIR}/build/plugins/libtg-hello.so")
  message(FATAL_ERROR "the installed tinyrun did not load the hello plugin")
endif()
if(NOT OUT MATCHES "null: available\n  library   ${prefix}/lib/tg/plugins/libtg-null.so")
  message(FATAL_ERROR "the installed tinyrun did not find null in ${prefix}/lib/tg/plugins")
endif()
