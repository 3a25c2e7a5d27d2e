# Run at install time (deploy/CMakeLists.txt): writes the systemd units with
# the programs' paths under the prefix actually installed to (cpack installs
# under /usr, `cmake --install --prefix P` under P), the hardening pasted in.
# Expects UNITS_SOURCE_DIR, UNITS_BINARY_DIR, UNITS (names), SBINDIR and DOCDIR
# (relative to the prefix).
set(GEODESIC_SBIN_DIR "${CMAKE_INSTALL_PREFIX}/${SBINDIR}")
set(GEODESIC_DOC_DIR "${CMAKE_INSTALL_PREFIX}/${DOCDIR}")
set(GEODESIC_EXAMPLES_DIR "${GEODESIC_DOC_DIR}/examples")
file(READ "${UNITS_SOURCE_DIR}/hardening.inc" GEODESIC_HARDENING)
# One folder per destination: cpack and a `cmake --install --prefix` may run at once.
string(MD5 destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
foreach(unit ${UNITS})
  configure_file("${UNITS_SOURCE_DIR}/${unit}.in" "${UNITS_BINARY_DIR}/${destination}/${unit}" @ONLY)
  file(INSTALL "${UNITS_BINARY_DIR}/${destination}/${unit}" DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endforeach()
file(REMOVE_RECURSE "${UNITS_BINARY_DIR}/${destination}")
