# Run by ctest (cmake -P): configures the consumer project against a Tessera build tree,
# builds it and runs it. Any failing step fails the test.
foreach(var CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR Tessera_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${CONSUMER_BINARY_DIR})
set(configure_args -S ${CONSUMER_SOURCE_DIR} -B ${CONSUMER_BINARY_DIR} -G ${GENERATOR}
  -DTessera_DIR=${Tessera_DIR} -DCMAKE_BUILD_TYPE=Release)
if(CMAKE_CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER})
endif()
if(CMAKE_MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM})
endif()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "find_package consumer: ${what} failed (${rc})")
  endif()
endfunction()

run_step("configure" ${CMAKE_COMMAND} ${configure_args})
run_step("build" ${CMAKE_COMMAND} --build ${CONSUMER_BINARY_DIR})
run_step("run" ${CONSUMER_BINARY_DIR}/consumer)
message(STATUS "find_package consumer: configured, built and ran against ${Tessera_DIR}")
