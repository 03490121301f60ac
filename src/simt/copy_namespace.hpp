// The emulator's inline device helpers (wmma, the PTX wrappers) are compiled
// into plain and traced files alike. Where the compiler does not inline them
// (-O0), each file emits its own copy under the same name and the linker keeps
// one for the whole program: a plain kernel may then run an instrumented copy
// (its loads reported as uninitialized reads) or a traced one lose accesses.
// An inline namespace named after the copy gives the two different symbols;
// code never spells it. warpnet_simt_traced() defines WARPNET_TRACED_COPY.
#pragma once

#if defined(WARPNET_TRACED_COPY) && WARPNET_TRACED_COPY
#define WARPNET_SIMT_COPY traced_copy
#else
#define WARPNET_SIMT_COPY plain_copy
#endif
