/* Writeback: the completion-reporting hook and the throttler (DESIGN.md §7).
 * Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
