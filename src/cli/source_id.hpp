// Which sources this binary was built from, written into every record
// (machine_record): the hash of scripts/source-hash.sh, which
// scripts/gpu-check.sh compares with the tree it runs in, and the git commit
// ("-dirty" with uncommitted changes; "unknown" outside a clone). Defined in
// a file the build generates (scripts/source-id.cmake).
#pragma once

namespace warpnet::build {
extern const char* const source_hash;
extern const char* const git_commit;
}  // namespace warpnet::build
