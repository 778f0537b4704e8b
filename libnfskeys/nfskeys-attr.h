/* Directory attributes: per-directory cache policy and its inheritance (DESIGN.md §6).
 * Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
