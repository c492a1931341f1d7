// The cairn command line: CLI11 subcommands over StudyClient. main.cc only
// calls RunCli, so tests can run the whole command line in-process.
#ifndef CAIRN_CLI_COMMANDS_H_
#define CAIRN_CLI_COMMANDS_H_

#include <ostream>

namespace cairn::cli {

// Exit codes of the cairn binary.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // The command failed (RPC, bad input).
inline constexpr int kExitUsage = 2;  // The command line was malformed.

// Parses argv (argv[0] is the program name) and runs the command, writing
// results to `out` and diagnostics to `err`. A failure prints one line
// "cairn: error: <CODE>: <message>" to `err` and returns kExitError; usage
// errors print CLI11's message and return kExitUsage; --help returns kExitOk.
// The server comes from --server, else $CAIRN_SERVER, else 127.0.0.1:50051.
int RunCli(int argc, const char* const* argv, std::ostream& out,
           std::ostream& err);

}  // namespace cairn::cli

#endif  // CAIRN_CLI_COMMANDS_H_
