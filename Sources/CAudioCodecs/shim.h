// Debian's liblc3 (liblc3-dev 1.0.1: LE Audio's LC3) and libsbc (libsbc-dev 2.0: A2DP's SBC).
#include <lc3.h>
#include <sbc/sbc.h>
