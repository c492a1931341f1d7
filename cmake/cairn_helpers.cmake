# Shared CMake helpers.

# cairn_add_test(NAME name SOURCES a.cc ... LIBS lib ... [TIMEOUT s] [LABELS l])
# Builds one gtest executable under build/tests and registers it with ctest.
# Its main is tests/testing/gtest_main.cc: a GTEST_SKIP makes the binary exit
# 77, which ctest reports as Skipped (SKIP_RETURN_CODE), never as Passed.
function(cairn_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} cairn::testing::gtest_main GTest::gtest GTest::gmock)
  # Test drivers need no -O3 (the code under test keeps its build type's
  # flags): -O1 compiles them about a quarter faster.
  target_compile_options(${T_NAME} PRIVATE -O1)
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77
    ENVIRONMENT "CAIRN_BIN_DIR=${CMAKE_BINARY_DIR}/bin;CAIRN_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
