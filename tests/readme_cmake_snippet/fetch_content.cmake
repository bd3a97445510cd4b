# The FetchContent form of README.md's CMake snippet: given to the scratch project as
# CMAKE_PROJECT_INCLUDE (read right after its project()), it adds sampcert from
# SAMPCERT_SOURCE_DIR as a subproject; OVERRIDE_FIND_PACKAGE makes the snippet's
# find_package(sampcert) find that instead of an installed package. A user writes GIT_REPOSITORY
# and GIT_TAG where this writes SOURCE_DIR.
include_guard(GLOBAL)  # CMAKE_PROJECT_INCLUDE is read after sampcert's own project() too
include(FetchContent)
set(SAMPCERT_ENABLE_CUDA OFF)  # the plug-in needs none of it, and check_language(CUDA) is slow
FetchContent_Declare(sampcert SOURCE_DIR "${SAMPCERT_SOURCE_DIR}" OVERRIDE_FIND_PACKAGE)
FetchContent_MakeAvailable(sampcert)
