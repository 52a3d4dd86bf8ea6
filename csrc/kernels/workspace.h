// Byte offsets of the arrays a kernel pass keeps in one device workspace (host code, shared by
// the ops' launchers: the caller sizes the workspace from the same offsets it launches with).
#pragma once

#include <cstddef>

namespace twinops {

// Hands out the byte offsets of consecutive workspace arrays, each start 256-byte aligned.
struct WorkspaceOffsets {
  size_t end = 0;  // bytes handed out so far, rounded up to the alignment
  size_t take(size_t bytes) {
    const size_t at = end;
    end = (end + bytes + 255) & ~static_cast<size_t>(255);
    return at;
  }
};

}  // namespace twinops
