# The version every program prints (--version): the project version, plus
# `git describe` of the checkout when git and a .git are there at configure
# time (a source tarball has neither: the project version alone).
# Sets GEODESIC_VERSION_STRING, e.g. "0.1.0 (git b433bc6-dirty)".
set(GEODESIC_VERSION_STRING ${PROJECT_VERSION})
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE geodesic_git_describe OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE geodesic_git_result ERROR_QUIET)
  if(geodesic_git_result EQUAL 0 AND geodesic_git_describe)
    set(GEODESIC_VERSION_STRING "${PROJECT_VERSION} (git ${geodesic_git_describe})")
  endif()
endif()
