/* An in-memory index of /etc/passwd or /etc/group (name -> id, id -> name, first line
 * wins as in nss_files) used by the nsswitch backend when nsswitch.conf's first source for
 * the database is `files`: a hit is exactly what getpw*_r/getgr*_r would answer, and it
 * can be given without I/O (NFSKEYS_IDMAP_LOOKUP_NOWAIT). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NFI_FILE_MAX (4u << 20) /* larger files are not indexed */

enum nfi_db { NFI_PASSWD, NFI_GROUP };

struct nfi;

/* etc_dir: where passwd, group and nsswitch.conf are (NULL: /etc).  NULL on ENOMEM. */
struct nfi *nfi_new(enum nfi_db db, const char *etc_dir);
void nfi_free(struct nfi *x);

/* 0 and the answer from the index; -EAGAIN when the index cannot answer: not in the file
 * (a later NSS source may know it), no usable index (nsswitch.conf's first source is not
 * files, compat lines, a file too large or not parsed exactly as nss_files would), or,
 * with nowait, an index that is not built or no longer matches the files (nowait never
 * reads a file; without nowait the index is rebuilt first).  Whether the files changed:
 * inotify says, or where it cannot see every change, stat() on each lookup.
 * id_to_name: -ENAMETOOLONG when the name does not fit size.  Thread-safe; readers
 * never wait for a rebuild's reading (it builds aside and swaps a pointer). */
int nfi_name_to_id(struct nfi *x, const char *name, bool nowait, uint32_t *ret_id);
int nfi_id_to_name(struct nfi *x, uint32_t id, bool nowait, char *buf, size_t size);

/* How many rebuilds the index has done (tests: a change is read once, not every time). */
unsigned nfi_builds(struct nfi *x);
