#include <pcap/pcap.h>

#if defined(__GLIBC__)
#include <malloc.h>
/// Bytes of heap in use (glibc), for tests that prove reading does not grow the heap.
static inline size_t bluesift_heap_in_use(void) { return mallinfo2().uordblks; }
#endif
