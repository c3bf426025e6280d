// dflc: the command-line driver's main(). Parses the arguments
// (CommandLine.h), runs the command (Commands.h) and turns an internal error
// into "dflc: internal compiler error: <what broke>" and exit 3.
// docs/cli.md is its reference.
//
// Exit codes: 0 ok, 1 invalid input, 2 usage error, 3 internal error.
#include "driver/DriverOptions.h"
#include "support/Check.h"
#include "tools/CommandLine.h"
#include "tools/Commands.h"

#include <iostream>

using namespace dfl;
using namespace dfl::tools;

int main(int argc, char **argv) {
  try {
    std::string usageError;
    auto cl = parseCommandLine({argv + 1, argv + argc}, usageError);
    if (!cl) {
      std::cerr << "dflc: error: " << usageError << "\n" << "Try 'dflc --help'.\n";
      return kExitUsage;
    }
    if (cl->command == "help") {
      std::cout << kHelp;
      return kExitOk;
    }
    if (cl->command == "version") {
      std::cout << "dflc " << driver::kVersion << "\n";
      return kExitOk;
    }
    return runCommand(*cl);
  } catch (const std::exception &e) {   // InternalError (DFLC_CHECK) and anything unexpected
    std::cerr << "dflc: internal compiler error: " << e.what() << "\n";
  }
  return kExitInternal;
}
