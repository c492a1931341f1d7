// cairn: the command-line client of cairnd. See cli/commands.h.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  return cairn::cli::RunCli(argc, argv, std::cout, std::cerr);
}
