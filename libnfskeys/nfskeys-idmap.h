/* Identity mapping: names, principals and SIDs to and from ids (DESIGN.md §4).
 * Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
