// The emulator's inline device helpers (wmma, the PTX wrappers) are compiled
// into plain and traced files alike. Where the compiler does not inline them
// (-O0), each file emits its own copy under the same name and the linker keeps
// one for the whole program: a plain kernel may then run an instrumented copy
// (its loads reported as uninitialized reads) or a traced one lose accesses.
// An inline namespace named after the copy gives the two different symbols;
// code never spells it. warpnet_simt_traced() defines WARPNET_TRACED_COPY.
#pragma once

// WARPNET_SIMT_TRACED says which copy a wrapper is, for a check that needs
// the kernel's own accesses seen (a wgmma's operands against the stores
// that filled them): a plain kernel's reach no checker.
#if defined(WARPNET_TRACED_COPY) && WARPNET_TRACED_COPY
#define WARPNET_SIMT_COPY traced_copy
#define WARPNET_SIMT_TRACED true
#else
#define WARPNET_SIMT_COPY plain_copy
#define WARPNET_SIMT_TRACED false
#endif
