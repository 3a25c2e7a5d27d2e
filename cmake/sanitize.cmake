# Build-wide checks: sanitizers (GEODESIC_SANITIZE) and warnings as errors
# (GEODESIC_WERROR). Included by the top-level CMakeLists.txt before any target.
#
#   -DGEODESIC_SANITIZE=address            ASan
#   -DGEODESIC_SANITIZE=undefined          UBSan
#   -DGEODESIC_SANITIZE=address,undefined  both (what `make test-sanitize` uses for `-L unit`)
#   -DGEODESIC_SANITIZE=thread             TSan (what `make test-sanitize` uses for `-L threads`)
#
# Every UBSan finding stops the program (no recovery), as ASan's do. The runtime
# options (halt on the first report) and the checked-in suppressions
# (tests/sanitizers/*.supp) are set by `make test-sanitize`; set them the same
# way when running ctest in a sanitizer build by hand.

set(GEODESIC_SANITIZE "" CACHE STRING "Sanitizers: address, undefined, address,undefined or thread (empty: none)")
option(GEODESIC_WERROR "Treat compiler warnings as errors (CI turns it on)" OFF)

if(GEODESIC_WERROR)
  add_compile_options(-Werror)
endif()

if(GEODESIC_SANITIZE)
  string(REPLACE "," ";" sanitizers "${GEODESIC_SANITIZE}")
  list(REMOVE_DUPLICATES sanitizers)
  foreach(sanitizer IN LISTS sanitizers)
    if(NOT sanitizer MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "GEODESIC_SANITIZE: unknown sanitizer '${sanitizer}' (use address, undefined, thread)")
    endif()
  endforeach()
  if("thread" IN_LIST sanitizers AND NOT sanitizers STREQUAL "thread")
    message(FATAL_ERROR "GEODESIC_SANITIZE: thread cannot be combined with another sanitizer")
  endif()
  list(JOIN sanitizers "," joined)
  # -O1 -g1 (placed after the build type's -O2 -g, so they win): the level ASan's
  # authors recommend, line tables for the reports' stack traces, and half the
  # compile time of -O2 -g, which matters because CI builds every test twice more
  # under sanitizers.
  add_compile_options(-fsanitize=${joined} -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g1)
  add_link_options(-fsanitize=${joined})
endif()
