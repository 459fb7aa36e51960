// Debian's zlib, liblzma, libzstd and libbz2 (zlib1g-dev liblzma-dev libzstd-dev libbz2-dev).
// The init macros become functions Swift can call.
#include <zlib.h>
#include <lzma.h>
#include <zstd.h>
#include <bzlib.h>
#include <string.h>

/// windowBits 15 + 32: zlib or gzip header, detected by zlib.
static inline int bluesift_inflate_init(z_stream *s, int windowBits) {
    memset(s, 0, sizeof *s);
    return inflateInit2(s, windowBits);
}

static inline lzma_ret bluesift_xz_init(lzma_stream *s) {
    lzma_stream init = LZMA_STREAM_INIT;
    *s = init;
    return lzma_stream_decoder(s, UINT64_MAX, LZMA_CONCATENATED);
}

static inline int bluesift_bz2_init(bz_stream *s) {
    memset(s, 0, sizeof *s);
    return BZ2_bzDecompressInit(s, 0, 0);
}
