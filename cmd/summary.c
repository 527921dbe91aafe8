/* placeholder until the module lands */
#include "cmd/cmd.h"
int cmd_summary(int argc, char **argv) { (void)argc; (void)argv; return 2; }
