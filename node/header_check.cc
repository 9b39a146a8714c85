// Compiles node/node.h on its own (used until leasehold_core exists).
#include "node/node.h"
