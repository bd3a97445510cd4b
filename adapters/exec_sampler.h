// `exec:COMMAND` samplers: a sampler in any language, run as a child process that speaks the
// sampcert process protocol (adapters/python/PROTOCOL.md). On this side it is one more
// implementation of the C ABI table, so the Sampler handle, the properties, the runner's
// isolation and the reports treat it exactly like a plug-in.
#ifndef SAMPCERT_ADAPTERS_EXEC_SAMPLER_H_
#define SAMPCERT_ADAPTERS_EXEC_SAMPLER_H_

#include <string>
#include <vector>

#include "adapters/exec_protocol.h"  // kExecProtocolMajor, kExecProtocolMinor
#include "adapters/plugin_loader.h"
#include "sampcert/error.h"

namespace sampcert::adapters {

// Splits a command line into argv without a shell (PROTOCOL.md, "The command line"): blanks
// separate words; '...' is literal; "..." is literal except \" \\ \$ \`; a backslash outside
// quotes escapes the next character. Shell syntax (| & ; < > ( ) $ ` * ? [ ] ~ { }) outside
// quotes is refused with a message: run `sh -c '...'` explicitly for a pipeline.
Expected<std::vector<std::string>> SplitCommandLine(const std::string& command);

// An ABI table for `command` (without the "exec:" prefix). Nothing is started here beyond
// checking the command line; get_info starts the child (and keeps it for the first create).
// Each handle is its own child process; destroy ends it (DESTROY, then SIGKILL) and reaps it.
// At most 16 exec samplers are open at once in a process (the ABI's get_info has no context
// argument, so each open program uses one of 16 fixed tables).
Expected<LoadedPlugin> OpenExecSampler(const std::string& command);

}  // namespace sampcert::adapters

#endif  // SAMPCERT_ADAPTERS_EXEC_SAMPLER_H_
