#include "cli/command.h"
#include "console/console.h"

int main(int argc, char** argv) {
  stagegate::cli::InstallLastResortHandler();
  stagegate::console::Console console = stagegate::console::Console::Standard();
  return stagegate::cli::Main(argc, argv, console);
}
