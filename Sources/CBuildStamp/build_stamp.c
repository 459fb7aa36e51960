#include "build_stamp.h"

// The commit is written into the linked binary by scripts/stamp_binary.py (make release,
// make install): it finds the marker and overwrites the text after it, within these 64
// bytes. Kept in C, out of the Swift optimiser's reach, so the bytes are read at run time.
const char bluesift_build_stamp[64] = "@(#)BLUESIFT-COMMIT:unknown";

const char *bluesift_build_commit(void) { return bluesift_build_stamp + 20; }
