/* What the parts of kernel mounts' writeback share: the mount object (wb-kernel-mount.c
 * opens it, wb-kernel.c sets its bdi knobs, wb-kernel-sampler.c reads its escaped mount
 * point), the limits' bounds and the /proc root.  Included by wb-kernel*.c only. */
#pragma once

#include <limits.h>

struct nfskeys_ctx;

#define MIB (1024ull * 1024)
#define LIMIT_MIN MIB
#define LIMIT_MAX (1024 * 1024 * MIB)

struct nfskeys_wb_mount {
	struct nfskeys_ctx *ctx;
	char *path;          /* the mount point (as the mount table has it, unescaped) */
	char *esc;           /* and escaped, as mountstats prints it */
	char bdi[32];
	char fstype[32];
	char bdidir[PATH_MAX];
	int mnt_id;
	int knobs;           /* 2: max_bytes + strict_limit; 1: max_ratio only */
};

/* The root of /proc (NFSKEYS_WB_PROC, a test-only override ignored when setuid). */
const char *wbk_proc_root(void);
