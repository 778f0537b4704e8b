/* Credentials: CIFS, AFS and NFS keys through the credential plugins (DESIGN.md §3).
 * Included by nfskeys.h; do not include directly. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
