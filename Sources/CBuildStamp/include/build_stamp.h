#ifndef BLUESIFT_BUILD_STAMP_H
#define BLUESIFT_BUILD_STAMP_H

/// The git commit the binary was built from ("unknown" from a plain `swift build`).
const char *bluesift_build_commit(void);

#endif
