// libFuzzer's driver, provided by the clang runtime that `-sanitize=fuzzer` links
// (libclang_rt.fuzzer, bundled with the Swift toolchain). Only referenced under -D FUZZING.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));
