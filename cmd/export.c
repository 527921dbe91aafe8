/* placeholder until the module lands */
#include "cmd/cmd.h"
int cmd_export(int argc, char **argv) { (void)argc; (void)argv; return 2; }
