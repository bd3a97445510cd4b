# docs/plugins.md embeds examples/minimal_plugin/minimal_plugin.c verbatim: fail when they drift.
# Arguments: -DREADME -DPLUGIN
file(READ "${README}" readme)
file(READ "${PLUGIN}" plugin)
string(FIND "${readme}" "```c\n${plugin}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "docs/plugins.md's minimal plug-in differs from ${PLUGIN}: paste the file into "
                      "its ```c block again")
endif()
