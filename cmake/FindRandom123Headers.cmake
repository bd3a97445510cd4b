# Random123 is header-only and ships no CMake config; this finds its headers and exposes
# them as the imported target Random123::Random123.
find_path(Random123_INCLUDE_DIR NAMES Random123/philox.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Random123Headers REQUIRED_VARS Random123_INCLUDE_DIR)
if(Random123Headers_FOUND AND NOT TARGET Random123::Random123)
  add_library(Random123::Random123 INTERFACE IMPORTED)
  set_target_properties(Random123::Random123 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${Random123_INCLUDE_DIR}")
endif()
mark_as_advanced(Random123_INCLUDE_DIR)
